// sgemm aat step 03: transposedTile[32][33] — the transposed store without bank conflicts.
// Shared memory is 32 banks of 4-byte words; word w lives in bank w mod 32. In step 02 a warp
// stores transposedTile[x][y] for x = 0..31: words 32x + y, all in bank y, so the store is replayed
// 32 times. One unused word per row makes the row stride 33: words 33x + y fall in banks
// (x + y) mod 32, all different, and the store takes one pass. The loads transposedTile[i][tx]
// stay conflict-free (33i + tx: consecutive tx, consecutive banks).
// Changes from step 02: [kTile][kTile + 1] instead of [kTile][kTile]; nothing else.
// Costs: 128 bytes of shared memory per block (8,320 instead of 8,192 bytes).
// Source: "CUDA实践指南(十八)", __shared__ float transposedTile[TILE_DIM][TILE_DIM+1].
// Run: build/bin/sgemm_aat_03_padded --m 8192 --k 32
#include "sgemm/sgemm.cuh"

namespace sgemm::aat_padded {

constexpr int kTile = 32;  // TILE_DIM: a 32 x 32 block of threads per 32 x 32 tile of C
constexpr int kPad = 1;    // row stride 33 words: a column of the tile spans all 32 banks
static_assert(kTile == 32, "a warp spans one row of the tile, one line of A");
static_assert((kTile + kPad) % 32 == 1, "a row stride of 1 mod 32 words puts a column in 32 banks");

__global__ void __launch_bounds__(kTile * kTile)
    aat_padded(const float* __restrict__ A, float* __restrict__ C, int64_t m, int64_t k,
               int64_t tiles_n) {
  __shared__ float aTile[kTile][kTile];
  __shared__ float transposedTile[kTile][kTile + kPad];
  const TileOrigin t = tile_origin(tiles_n, kTile, kTile);
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row = t.row + ty, col = t.col + tx;
  const int64_t right = t.col + ty;  // the row of A that becomes column ty of transposedTile
  float sum = 0.0f;
  for (int64_t k0 = 0; k0 < k; k0 += kTile) {
    // Step 1: both copies read along rows of A; the second is stored transposed.
    const bool k_in = k0 + tx < k;
    aTile[ty][tx] = (row < m && k_in) ? A[row * k + k0 + tx] : 0.0f;
    transposedTile[tx][ty] = (right < m && k_in) ? A[right * k + k0 + tx] : 0.0f;
    __syncthreads();
    // Step 2: 32 multiply-adds from shared memory.
#pragma unroll
    for (int i = 0; i < kTile; ++i) sum += aTile[ty][i] * transposedTile[i][tx];
    __syncthreads();
  }
  if (row < m && col < m) C[row * m + col] = sum;
}

void launch(const Aat& a) {
  const TileGrid grid = tile_grid(a.m, a.m, kTile, kTile);
  aat_padded<<<grid.blocks, dim3(kTile, kTile), 0, a.stream>>>(a.A, a.C, a.m, a.k, grid.tiles_n);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"sgemm/aat_03_padded", nullptr, launch};
LADDER_STEP(kStep);

}  // namespace sgemm::aat_padded
