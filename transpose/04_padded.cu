// transpose step 04: tile[32][33] — the column read of the tile without bank conflicts.
// Shared memory is 32 banks of 4-byte words; word w lives in bank w mod 32. In step 03 the write
// half reads tile[x][y] for x = 0..31: words 32x + y, all in bank y, so the warp's one load is
// replayed 32 times. One unused word per row makes the row stride 33: words 33x + y fall in banks
// (x + y) mod 32, all different, and the warp's load is served in one pass. The row read
// tile[y][x] stays conflict-free (33y + x: consecutive x, consecutive banks).
// Changes from step 03: kPad = 1 instead of 0 (tile[32][33]); nothing else.
// Costs: 128 bytes of shared memory per block (4,224 instead of 4,096 bytes).
// Source: "CUDA实践指南(十八)", __shared__ float transposedTile[TILE_DIM][TILE_DIM+1]; the tile of
// "CUDA编程入门", section 使用SharedMemory优化矩阵转置. Run: build/bin/transpose_04_padded --rows 8192 --cols 8192
#include "transpose/transpose.cuh"

namespace transpose::padded {

constexpr int kTile = 32;  // tile side = warp width: one warp moves one tile row
constexpr int kPad = 1;    // row stride 33 words: a column of the tile spans all 32 banks
static_assert(kTile == 32, "a warp must cover a whole tile row for both sides to be coalesced");
static_assert(kTile * kTile <= 1024, "one thread per tile element");
static_assert((kTile + kPad) % 32 == 1, "a row stride of 1 mod 32 words puts a column in 32 banks");

__global__ void transpose_tiled_padded(const float* __restrict__ in, float* __restrict__ out,
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
  transpose_tiled_padded<<<g.grid, dim3(kTile, kTile), 0, stream>>>(in, out, rows, cols, g.rows_on_x);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"transpose/04_padded", launch,
                 "32 x 32 threads, one element each, tile[32][33] in shared memory"};
LADDER_STEP(kStep);

}  // namespace transpose::padded
