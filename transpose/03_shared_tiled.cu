// transpose step 03: a 32 x 32 tile through shared memory — reads and writes both coalesced.
// A block of 32 x 32 threads copies one 32 x 32 tile of `in` into shared memory row by row
// (threadIdx.x along a row of `in`: coalesced), waits, then writes the tile's transpose row by row
// (threadIdx.x along a row of `out`: coalesced). The transposition itself happens in shared
// memory, where a strided access costs no DRAM sectors: thread (x, y) writes out[c0 + y][r0 + x]
// from tile[x][y]. Both global sides now move 4 sectors (one 128-byte line) per request.
// Changes from step 02: __shared__ float tile[32][32], a __syncthreads() between the two halves,
// and the write's indices swapped so that threadIdx.x is the lowest-weight index of the write too.
// Costs: tile[x][y] with x = threadIdx.x reads one column of the tile: 32 words 32 apart, all in
// one bank, a 32-way bank conflict (ncu: l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum).
// Source: "CUDA编程入门", section 使用SharedMemory优化矩阵转置 (transpose_tiled_kernel).
// Run: build/bin/transpose_03_shared_tiled --rows 8192 --cols 8192
#include "transpose/transpose.cuh"

namespace transpose::shared_tiled {

constexpr int kTile = 32;  // tile side = warp width: one warp moves one tile row
constexpr int kPad = 0;    // row stride 32 words: a column of the tile sits in one bank (step 04)
static_assert(kTile == 32, "a warp must cover a whole tile row for both sides to be coalesced");
static_assert(kTile * kTile <= 1024, "one thread per tile element");

__global__ void transpose_shared_tiled(const float* __restrict__ in, float* __restrict__ out,
                                       int64_t rows, int64_t cols, bool rows_on_x) {
  __shared__ float tile[kTile][kTile + kPad];
  const BlockTile t = block_tile(rows_on_x);
  const int64_t r0 = t.row * kTile, c0 = t.col * kTile;
  const int x = threadIdx.x, y = threadIdx.y;

  // Step 1: in[r0 + y][c0 + x] -> tile[y][x]; threadIdx.x walks along a row of `in`.
  if (r0 + y < rows && c0 + x < cols) tile[y][x] = in[(r0 + y) * cols + c0 + x];
  __syncthreads();

  // Step 2: tile[x][y] -> out[c0 + y][r0 + x]; threadIdx.x walks along a row of `out`.
  if (c0 + y < cols && r0 + x < rows) out[(c0 + y) * rows + r0 + x] = tile[x][y];
}

void launch(const ladder::DeviceInfo&, const float* in, float* out, int64_t rows, int64_t cols,
            cudaStream_t stream) {
  const TileGrid g = tile_grid(rows, cols, kTile, kTile);
  transpose_shared_tiled<<<g.grid, dim3(kTile, kTile), 0, stream>>>(in, out, rows, cols, g.rows_on_x);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"transpose/03_shared_tiled", launch,
                 "32 x 32 threads, one element each, tile[32][32] in shared memory"};
LADDER_STEP(kStep);

}  // namespace transpose::shared_tiled
