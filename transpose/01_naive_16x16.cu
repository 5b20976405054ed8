// transpose step 01: the post's first 2-D grid — 16 x 16 blocks, one element per thread.
// Thread (x, y) of block (bx, by) reads in[r][c] with r = by*16 + y, c = bx*16 + x, and writes it to
// out[c][r]. A warp is 32 consecutive threads: threadIdx.x = 0..15 on two values of threadIdx.y, so
// each warp reads two half-rows of 64 bytes, each the first or second half of a different 128-byte
// line, and writes 32 floats that lie in 16 different rows of out (rows*4 bytes apart).
// Changes from step 00: a transpose instead of a copy; a dim3 grid of dim3 blocks instead of a 1-D
// grid-stride loop, so the thread knows its (row, col) without a division.
// Costs: the write is strided: ~16 sectors per store request where 4 would do (ncu:
// l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum / l1tex__t_requests_pipe_lsu_mem_global_op_st.sum).
// Source: "CUDA编程入门", sections CUDA的二维计算 and Matrix Transpose (transpose_kernel,
// dim3 block(16, 16)). Run: build/bin/transpose_01_naive_16x16 --rows 8192 --cols 8192
#include "transpose/transpose.cuh"

namespace transpose::naive_16x16 {

constexpr int kBlockX = 16;  // threads along a row of `in`
constexpr int kBlockY = 16;  // threads down a column of `in`
static_assert(kBlockX * kBlockY <= 1024, "a block holds at most 1024 threads");
static_assert((kBlockX * kBlockY) % 32 == 0, "whole warps");

// One element per thread. threadIdx.x runs along a row of `in` (reads in order) but down a column
// of `out` (each write lands in another row): the lowest-weight index of the write is threadIdx.y's.
// The block's shape comes from the launch, so step 02 reuses this kernel with 32-wide blocks.
__global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out, int64_t rows,
                                int64_t cols, bool rows_on_x) {
  const BlockTile tile = block_tile(rows_on_x);
  const int64_t r = tile.row * blockDim.y + threadIdx.y;
  const int64_t c = tile.col * blockDim.x + threadIdx.x;
  if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
}

void launch(const ladder::DeviceInfo&, const float* in, float* out, int64_t rows, int64_t cols,
            cudaStream_t stream) {
  const TileGrid g = tile_grid(rows, cols, kBlockY, kBlockX);
  transpose_naive<<<g.grid, dim3(kBlockX, kBlockY), 0, stream>>>(in, out, rows, cols, g.rows_on_x);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"transpose/01_naive_16x16", launch, "16 x 16 threads, one element each, no shared memory"};
LADDER_STEP(kStep);

}  // namespace transpose::naive_16x16
