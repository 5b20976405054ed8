// sgemm step 02: the post's naive kernel — one thread per element of C, column on threadIdx.x.
// Thread (x, y) of a 32 x 8 block computes C[row][col] = sum_p A[row][p] B[p][col] with
// col = tile column + threadIdx.x. A warp now holds one row and 32 consecutive columns: at each p
// its 32 reads of B[p][col..col+31] are one 128-byte line (coalesced), its reads of A[row][p] are
// one address (a broadcast), and its stores to C are one line. Same arithmetic as step 01, a
// fraction of the memory transactions.
// Changes from step 01: the block is 8 x 32 instead of 32 x 8 elements, and threadIdx.x picks the
// column instead of the row.
// Costs: still no reuse — every thread reads its row of A and its column of B from the memory
// system (L1/L2) for 2 FLOPs per 8 bytes, an arithmetic intensity of 1/4 FLOP per byte moved into the
// SM: the kernel is bound by L1/L2 bandwidth, far below the FMA units (ncu: l1tex throughput).
// Source: "CUDA编程入门", section Naive SGEMM (naive_sgemm_kernel, 32 x 8 blocks).
// Run: build/bin/sgemm_02_naive --m 4096 --n 4096 --k 4096
#include "sgemm/sgemm.cuh"

namespace sgemm::naive {

constexpr int kTileRows = 8;   // blockDim.y
constexpr int kTileCols = 32;  // blockDim.x: consecutive threads take consecutive columns
static_assert(kTileCols == 32, "a warp must span 32 consecutive columns to read one line of B");
static_assert(kTileRows * kTileCols == 256, "the post's 256-thread blocks");

__global__ void sgemm_naive(const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C, int64_t m, int64_t n, int64_t k, int64_t tiles_n) {
  const TileOrigin t = tile_origin(tiles_n, kTileRows, kTileCols);
  const int64_t row = t.row + threadIdx.y, col = t.col + threadIdx.x;
  if (row >= m || col >= n) return;  // the edge tiles: threads past C have nothing to do
  float acc = 0.0f;
  for (int64_t p = 0; p < k; ++p) acc += A[row * k + p] * B[p * n + col];
  C[row * n + col] = acc;
}

void launch(const Gemm& g) {
  const TileGrid grid = tile_grid(g.m, g.n, kTileRows, kTileCols);
  sgemm_naive<<<grid.blocks, dim3(kTileCols, kTileRows), 0, g.stream>>>(g.A, g.B, g.C, g.m, g.n, g.k,
                                                                         grid.tiles_n);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"sgemm/02_naive", launch};
LADDER_STEP(kStep);

}  // namespace sgemm::naive
