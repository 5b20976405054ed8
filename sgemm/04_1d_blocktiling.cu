// sgemm step 04: 1-D block tiling — each thread computes a column of TM = 8 elements of C.
// A block of 512 threads computes a 64 x 64 tile of C from 64 x 8 tiles of A and 8 x 64 tiles of B
// in shared memory. Thread (thread_row, thread_col) owns C rows thread_row*8 .. +7 of one column: at
// each p it loads Bs[p][thread_col] ONCE into a register and uses it for 8 multiply-adds with
// As[thread_row*8 + i][p]. Shared-memory reads per multiply-add fall from 2 (step 03) to 9/8 in the
// source; in what ptxas emits (128-bit As loads, 4 values of k each), from 40 to 24 load
// instructions per 32 and per 64 multiply-adds.
// A warp's 32 threads share thread_row, so their As loads are one address (a broadcast) and their
// Bs loads one conflict-free row.
// Changes from step 03: 8 results per thread in a register array acc[8]; a 64 x 64 block tile with
// BK = 8 instead of 32 x 32 x 32; one flat 512-thread block, whose threads each copy one element of
// the A tile and one of the B tile.
// Costs: more registers per thread (8 accumulators; ptxas, sm_90: 57), so two 512-thread blocks
// per SM, 50% occupancy; 4 KiB of shared memory per block.
// Source: beyond the posts ("CUDA编程入门" goes from shared tiles straight to 2-D thread tiling); the
// 1-D step of Simon Boehm's "How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance: a
// Worklog", kernel 4. Run: build/bin/sgemm_04_1d_blocktiling --m 4096 --n 4096 --k 4096
#include "sgemm/sgemm.cuh"

namespace sgemm::blocktiling_1d {

constexpr int kBM = 64, kBN = 64, kBK = 8;  // block tile of C, and the depth of one k step
constexpr int kTM = 8;                      // rows of C per thread
constexpr int kThreads = kBM / kTM * kBN;   // 512: one thread per column of each 8-row strip
static_assert(kBM % kTM == 0, "whole strips of TM rows");
static_assert(kThreads == kBM * kBK && kThreads == kBK * kBN,
              "each thread copies exactly one element of the A tile and one of the B tile");
static_assert(kBN % 32 == 0, "a warp's threads share one thread_row: As loads broadcast");

__global__ void __launch_bounds__(kThreads)
    sgemm_1d_blocktiling(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                         int64_t m, int64_t n, int64_t k, int64_t tiles_n) {
  __shared__ float As[kBM][kBK];
  __shared__ float Bs[kBK][kBN];
  const TileOrigin t = tile_origin(tiles_n, kBM, kBN);
  const int tid = threadIdx.x;
  const int thread_row = tid / kBN, thread_col = tid % kBN;  // C rows thread_row*TM.., column thread_col
  const int a_row = tid / kBK, a_col = tid % kBK;            // the element of the A tile it copies
  const int b_row = tid / kBN, b_col = tid % kBN;            // the element of the B tile it copies
  const bool a_row_in = t.row + a_row < m, b_col_in = t.col + b_col < n;
  int64_t a_at = (t.row + a_row) * k + a_col;  // A[t.row + a_row][k0 + a_col], moving along k
  int64_t b_at = b_row * n + t.col + b_col;    // B[k0 + b_row][t.col + b_col], moving down k

  float acc[kTM] = {};
  for (int64_t k0 = 0; k0 < k; k0 += kBK, a_at += kBK, b_at += kBK * n) {
    // Step 1: copy the tiles; zeros past the edges of A and B.
    As[a_row][a_col] = (a_row_in && k0 + a_col < k) ? A[a_at] : 0.0f;
    Bs[b_row][b_col] = (k0 + b_row < k && b_col_in) ? B[b_at] : 0.0f;
    __syncthreads();
    // Step 2: per p, one B value from shared memory serves TM multiply-adds.
#pragma unroll
    for (int p = 0; p < kBK; ++p) {
      const float b = Bs[p][thread_col];
#pragma unroll
      for (int i = 0; i < kTM; ++i) acc[i] += As[thread_row * kTM + i][p] * b;
    }
    __syncthreads();
  }
  // Step 3: write the column strip, skipping rows and columns past the edges of C.
  const int64_t col = t.col + thread_col;
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    const int64_t row = t.row + thread_row * kTM + i;
    if (row < m && col < n) C[row * n + col] = acc[i];
  }
}

void launch(const Gemm& g) {
  const TileGrid grid = tile_grid(g.m, g.n, kBM, kBN);
  sgemm_1d_blocktiling<<<grid.blocks, kThreads, 0, g.stream>>>(g.A, g.B, g.C, g.m, g.n, g.k,
                                                               grid.tiles_n);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"sgemm/04_1d_blocktiling", launch};
LADDER_STEP(kStep);

}  // namespace sgemm::blocktiling_1d
