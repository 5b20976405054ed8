// sgemm step 01: one thread per element of C, with the wrong mapping — row on threadIdx.x.
// Thread (x, y) of a 32 x 8 block computes C[row][col] = sum_p A[row][p] B[p][col] with
// row = tile row + threadIdx.x. The 32 threads of a warp therefore hold 32 consecutive ROWS and one
// column: at each p they read A[row][p] for 32 rows, 32 addresses k floats apart, 32 sectors for
// one request; they all read the same B[p][col] (a broadcast); and their 32 stores to C are n floats
// apart, 32 sectors again. Nothing is reused on purpose: each of the m n threads reads 2k floats.
// Changes from nothing: the starting point, and the contrast step 02 draws.
// Costs: 32 sectors per A request and per C store (ncu: l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
// over l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum). What softens it is the L1 cache: a 32-byte
// sector of each of the warp's 32 rows of A holds the next 8 values of p.
// Source: "CUDA编程入门", section Naive SGEMM — with its mapping turned around, as the vector-add
// sections of the same post turn the coalesced loop into the chunked one; it is kernel 1 of Simon
// Boehm's "How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance: a Worklog".
// Run: build/bin/sgemm_01_naive_uncoalesced --m 4096 --n 4096 --k 4096
#include "sgemm/sgemm.cuh"

namespace sgemm::naive_uncoalesced {

constexpr int kTileRows = 32;  // blockDim.x: consecutive threads take consecutive rows
constexpr int kTileCols = 8;   // blockDim.y
static_assert(kTileRows * kTileCols == 256, "the post's 256-thread blocks");

__global__ void sgemm_naive_uncoalesced(const float* __restrict__ A, const float* __restrict__ B,
                                        float* __restrict__ C, int64_t m, int64_t n, int64_t k,
                                        int64_t tiles_n) {
  const TileOrigin t = tile_origin(tiles_n, kTileRows, kTileCols);
  const int64_t row = t.row + threadIdx.x, col = t.col + threadIdx.y;
  if (row >= m || col >= n) return;  // the edge tiles: threads past C have nothing to do
  float acc = 0.0f;
  for (int64_t p = 0; p < k; ++p) acc += A[row * k + p] * B[p * n + col];
  C[row * n + col] = acc;
}

void launch(const Gemm& g) {
  const TileGrid grid = tile_grid(g.m, g.n, kTileRows, kTileCols);
  sgemm_naive_uncoalesced<<<grid.blocks, dim3(kTileRows, kTileCols), 0, g.stream>>>(
      g.A, g.B, g.C, g.m, g.n, g.k, grid.tiles_n);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"sgemm/01_naive_uncoalesced", launch};
LADDER_STEP(kStep);

}  // namespace sgemm::naive_uncoalesced
