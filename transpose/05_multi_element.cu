// transpose step 05: 32 x 8 threads per 32 x 32 tile — each thread moves 4 elements.
// The block shrinks from 1,024 to 256 threads and each thread loops over 4 rows of the tile, 8 rows
// apart. Its 4 loads are independent, so they are all in flight before the first store to shared
// memory: 4x the bytes in flight per thread, the same per block. Smaller blocks also schedule
// better: an SM holds 8 of them (2,048 threads) and while one waits at __syncthreads() the others
// load or store, where 1,024-thread blocks fit only 2 per SM and stall together.
// Changes from step 04: dim3 block(32, 8) and a 4-trip loop in each half; tile[32][33] unchanged.
// Costs: 4 values live per thread (a few registers); each side still moves 128-byte row pieces,
// one 4-byte access per thread per instruction.
// Source: beyond the posts: TILE_DIM x BLOCK_ROWS threads of NVIDIA's "An Efficient Matrix
// Transpose in CUDA C/C++" (transposeNoBankConflicts); the padded tile of "CUDA实践指南(十八)".
// Run: build/bin/transpose_05_multi_element --rows 8192 --cols 8192
#include "transpose/transpose.cuh"

namespace transpose::multi_element {

constexpr int kTile = 32;                   // tile side = warp width
constexpr int kBlockRows = 8;               // rows of threads; each thread moves kTile / kBlockRows elements
constexpr int kPerThread = kTile / kBlockRows;
static_assert(kTile == 32, "a warp must cover a whole tile row for both sides to be coalesced");
static_assert(kTile % kBlockRows == 0, "every thread moves the same number of tile rows");
static_assert((kTile + 1) % 32 == 1, "padded row stride: a tile column spans all 32 banks");

__global__ void transpose_multi_element(const float* __restrict__ in, float* __restrict__ out,
                                        int64_t rows, int64_t cols, bool rows_on_x) {
  __shared__ float tile[kTile][kTile + 1];
  const BlockTile t = block_tile(rows_on_x);
  const int64_t r0 = t.row * kTile, c0 = t.col * kTile;
  const int x = threadIdx.x, y = threadIdx.y;

  // Step 1: rows y, y + 8, y + 16, y + 24 of the tile; the 4 loads issue before any store.
  const bool col_in = c0 + x < cols;
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int ty = y + i * kBlockRows;
    if (col_in && r0 + ty < rows) tile[ty][x] = in[(r0 + ty) * cols + c0 + x];
  }
  __syncthreads();

  // Step 2: columns y, y + 8, ... of the tile become rows of `out`.
  const bool row_in = r0 + x < rows;
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int ty = y + i * kBlockRows;
    if (row_in && c0 + ty < cols) out[(c0 + ty) * rows + r0 + x] = tile[x][ty];
  }
}

void launch(const ladder::DeviceInfo&, const float* in, float* out, int64_t rows, int64_t cols,
            cudaStream_t stream) {
  const TileGrid g = tile_grid(rows, cols, kTile, kTile);
  transpose_multi_element<<<g.grid, dim3(kTile, kBlockRows), 0, stream>>>(in, out, rows, cols,
                                                                          g.rows_on_x);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"transpose/05_multi_element", launch,
                 "32 x 8 threads, 4 elements each, tile[32][33] in shared memory"};
LADDER_STEP(kStep);

}  // namespace transpose::multi_element
