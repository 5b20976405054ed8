// sgemm aat step 02: C = A·Aᵀ through shared memory — coalesced reads, a transposed tile.
// A block of 32 x 32 threads computes one 32 x 32 tile of C, walking k in steps of 32. Each step it
// copies two 32 x 32 pieces of A into shared memory, both read along rows of A (coalesced): rows
// t.row.. (the left operand) into aTile as they are, and rows t.col.. (the right operand, Aᵀ) into
// transposedTile transposed — thread (x, y) reads A[t.col + y][k0 + x] and stores it at
// transposedTile[x][y]. The dot products then read aTile[ty][i] (a broadcast) and
// transposedTile[i][tx] (one row, conflict-free).
// Changes from step 01: the two tiles and the loop over k tiles with two __syncthreads(); zeros
// past the edges of A, so any m and k work (the guide assumes k = 32 and m a multiple of 32).
// Costs: the store into transposedTile[x][y] puts a warp's 32 values in one column: words 32x + y,
// all in bank y — a 32-way bank conflict, the store replayed 32 times (ncu:
// l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum). The guide measured this kernel below the
// C = AB kernel for exactly this reason.
// Source: "CUDA实践指南(十八)", coalescedMultiply. Run: build/bin/sgemm_aat_02_coalesced --m 8192 --k 32
#include "sgemm/sgemm.cuh"

namespace sgemm::aat_coalesced {

constexpr int kTile = 32;  // TILE_DIM: a 32 x 32 block of threads per 32 x 32 tile of C
static_assert(kTile == 32, "a warp spans one row of the tile, one line of A");

__global__ void __launch_bounds__(kTile * kTile)
    aat_coalesced(const float* __restrict__ A, float* __restrict__ C, int64_t m, int64_t k,
                  int64_t tiles_n) {
  __shared__ float aTile[kTile][kTile];
  __shared__ float transposedTile[kTile][kTile];
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
  aat_coalesced<<<grid.blocks, dim3(kTile, kTile), 0, a.stream>>>(a.A, a.C, a.m, a.k, grid.tiles_n);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"sgemm/aat_02_coalesced", nullptr, launch};
LADDER_STEP(kStep);

}  // namespace sgemm::aat_coalesced
