// sgemm aat step 01: C = A·Aᵀ, one thread per element of C — strided reads of A.
// Thread (x, y) of a 32 x 32 block computes C[row][col] = sum_p A[row][p] A[col][p], the dot product
// of two rows of A. For a warp, row is fixed and col runs over 32 consecutive values, so at each p it
// reads A[row][p] once (a broadcast) but A[col][p] from 32 different rows, k floats apart: a stride
// of k, 32 sectors for one request, where step 02 of the main ladder read one line.
// Changes from nothing: the starting point of the side ladder; B = Aᵀ is never formed.
// Costs: 32 sectors per request for the second operand (ncu: l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
// over l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum). At the guide's k = 32 a row of A is one
// 128-byte line and all of A (1 MiB at m = 8192) stays in L2, so L1 hits soften the stride.
// Source: "CUDA实践指南(十八)", simpleMultiply (NVIDIA's CUDA C++ Best Practices Guide, "Shared Memory
// in Matrix Multiplication (C=AAT)"), for any k instead of k = TILE_DIM.
// Run: build/bin/sgemm_aat_01_strided --m 8192 --k 32
#include "sgemm/sgemm.cuh"

namespace sgemm::aat_strided {

constexpr int kTile = 32;  // TILE_DIM: a 32 x 32 block of threads per 32 x 32 tile of C
static_assert(kTile == 32, "a warp spans one row of the tile");

__global__ void aat_strided(const float* __restrict__ A, float* __restrict__ C, int64_t m, int64_t k,
                            int64_t tiles_n) {
  const TileOrigin t = tile_origin(tiles_n, kTile, kTile);
  const int64_t row = t.row + threadIdx.y, col = t.col + threadIdx.x;
  if (row >= m || col >= m) return;  // the edge tiles: threads past C have nothing to do
  float sum = 0.0f;
  for (int64_t p = 0; p < k; ++p) sum += A[row * k + p] * A[col * k + p];
  C[row * m + col] = sum;
}

void launch(const Aat& a) {
  const TileGrid grid = tile_grid(a.m, a.m, kTile, kTile);
  aat_strided<<<grid.blocks, dim3(kTile, kTile), 0, a.stream>>>(a.A, a.C, a.m, a.k, grid.tiles_n);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"sgemm/aat_01_strided", nullptr, launch};
LADDER_STEP(kStep);

}  // namespace sgemm::aat_strided
