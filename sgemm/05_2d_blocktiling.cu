// sgemm step 05: 2-D block tiling — each thread computes an 8 x 8 patch of C from registers.
// A block of 256 threads computes a 128 x 128 tile of C (BM = BN = 128) from 128 x 8 tiles of A and
// 8 x 128 tiles of B (BK = 8) in shared memory. Each thread owns a TM x TN = 8 x 8 patch: at each p
// it loads a column of 8 values of As and a row of 8 values of Bs into registers and multiplies them
// as an outer product, 64 multiply-adds for 16 shared-memory loads (4 per load; step 04 did 8/9).
// Every value a block reads from global memory now serves 128 multiply-adds (step 03: 32).
// Changes from step 04: the thread tile grows from 8 x 1 to 8 x 8 (acc[8][8], a_frag[8], b_frag[8]);
// the block tile from 64 x 64 to 128 x 128; 256 threads copy 1,024-element tiles, so each copies a
// run of 4 consecutive elements of a tile row (one 64-bit offset per tile keeps registers down). The
// kernel is a template over the tiling (Tiling<...>), so that step 06 can retune the same code.
// Edges: a block whose tile of C lies inside C copies its tiles without bounds checks (all but the
// last k step when k is not a multiple of BK); only edge blocks pay for the checks. With this many
// multiply-adds per copied element the checks are still a large share of the loop's other
// instructions (the appendix measures what dropping them is worth).
// Costs: registers — 64 accumulators, 16 operands and the addresses. Left alone, ptxas (CUDA 13.0,
// sm_90) takes 147 per thread and only one 256-thread block fits an SM's 64K registers; MinBlocks = 2
// caps it at 128 (no spills), the post's two blocks per SM: 16 warps, 25% occupancy on an H100 (the
// post: 94 registers, 33.3% on a GPU with 1,536 threads per SM). Large tiles also mean few blocks: a
// 4096² C has 1,024 of them, 3.9 waves of 264 block slots; a 2048² C has 256, under one wave — the
// post's "0.9 full waves". ptxas turns the fragment loads into 128-bit LDS (4 k of a row of As,
// 4 columns of Bs), so each multiply-add costs about 1/16 of a shared-memory load instruction.
// Source: "CUDA编程入门", section 线程粗化 (2D Thread Tiling): BM = BN = 128, BK = 8, TM = TN = 8.
// Run: build/bin/sgemm_05_2d_blocktiling --m 4096 --n 4096 --k 4096
#include "sgemm/sgemm.cuh"

namespace sgemm::blocktiling_2d {

// A block tile of BM x BN elements of C, k steps of BK, TM x TN elements of C per thread; at least
// MinBlocks blocks per SM (__launch_bounds__: caps the registers at 64K / (threads x MinBlocks)).
template <int BM_, int BN_, int BK_, int TM_, int TN_, int MinBlocks_>
struct Tiling {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_, kMinBlocks = MinBlocks_;
  static constexpr int kThreadCols = BN / TN;               // threads across a row of the tile
  static constexpr int kThreads = BM / TM * kThreadCols;
  static constexpr int kACopy = BM * BK / kThreads;         // consecutive A-tile elements per thread
  static constexpr int kBCopy = BK * BN / kThreads;         // consecutive B-tile elements per thread
  static_assert(BM % TM == 0 && BN % TN == 0, "the block tile is whole thread tiles");
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, one block");
  static_assert(kACopy >= 1 && kACopy * kThreads == BM * BK && BK % kACopy == 0,
                "the threads copy the A tile in equal runs that do not cross its rows");
  static_assert(kBCopy >= 1 && kBCopy * kThreads == BK * BN && BN % kBCopy == 0,
                "the threads copy the B tile in equal runs that do not cross its rows");
};

template <class T>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    sgemm_2d_blocktiling(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                         int64_t m, int64_t n, int64_t k, int64_t tiles_n) {
  __shared__ __align__(16) float As[T::BM][T::BK];  // 16-byte aligned: rows of 4 floats load as one
  __shared__ __align__(16) float Bs[T::BK][T::BN];  // 128-bit LDS where a thread reads 4 in a row
  const TileOrigin t = tile_origin(tiles_n, T::BM, T::BN);
  const int tid = threadIdx.x;
  // This thread's patch of C: rows thread_row*TM .. +TM-1, columns thread_col*TN .. +TN-1.
  const int thread_row = tid / T::kThreadCols, thread_col = tid % T::kThreadCols;
  // What it copies each k step: kACopy consecutive elements of row a_row of the A tile from column
  // a_col, and kBCopy of row b_row of the B tile from column b_col (one 64-bit offset each).
  const int a_row = tid / (T::BK / T::kACopy), a_col = tid % (T::BK / T::kACopy) * T::kACopy;
  const int b_row = tid / (T::BN / T::kBCopy), b_col = tid % (T::BN / T::kBCopy) * T::kBCopy;
  const bool a_row_in = t.row + a_row < m;
  const int64_t b_cols_left = n - (t.col + b_col);  // columns of B from b_col on that exist
  int64_t a_at = (t.row + a_row) * k + a_col;  // A[t.row + a_row][k0 + a_col], moving along k
  int64_t b_at = b_row * n + t.col + b_col;    // B[k0 + b_row][t.col + b_col], moving down k

  // A block whose tile of C lies inside C copies whole tiles without checks until the last, partial
  // k step: the checks are instructions in the loop that feeds the multiply-adds.
  const bool inside = t.row + T::BM <= m && t.col + T::BN <= n;
  const int64_t k_whole = k - k % T::BK;  // k steps before this are whole tiles along k

  float acc[T::TM][T::TN] = {};
  float a_frag[T::TM], b_frag[T::TN];
  for (int64_t k0 = 0; k0 < k; k0 += T::BK, a_at += T::BK, b_at += T::BK * n) {
    // Step 1: copy the tiles; zeros past the edges of A and B.
    if (inside && k0 < k_whole) {
#pragma unroll
      for (int e = 0; e < T::kACopy; ++e) As[a_row][a_col + e] = A[a_at + e];
#pragma unroll
      for (int e = 0; e < T::kBCopy; ++e) Bs[b_row][b_col + e] = B[b_at + e];
    } else {
#pragma unroll
      for (int e = 0; e < T::kACopy; ++e)
        As[a_row][a_col + e] = (a_row_in && k0 + a_col + e < k) ? A[a_at + e] : 0.0f;
#pragma unroll
      for (int e = 0; e < T::kBCopy; ++e)
        Bs[b_row][b_col + e] = (k0 + b_row < k && e < b_cols_left) ? B[b_at + e] : 0.0f;
    }
    __syncthreads();
    // Step 2: per p, a column of TM values of As and a row of TN values of Bs into registers, and
    // their outer product into the TM x TN accumulators.
#pragma unroll
    for (int p = 0; p < T::BK; ++p) {
#pragma unroll
      for (int i = 0; i < T::TM; ++i) a_frag[i] = As[thread_row * T::TM + i][p];
#pragma unroll
      for (int j = 0; j < T::TN; ++j) b_frag[j] = Bs[p][thread_col * T::TN + j];
#pragma unroll
      for (int i = 0; i < T::TM; ++i)
#pragma unroll
        for (int j = 0; j < T::TN; ++j) acc[i][j] += a_frag[i] * b_frag[j];
    }
    __syncthreads();
  }
  // Step 3: write the patch, skipping rows and columns past the edges of C.
#pragma unroll
  for (int i = 0; i < T::TM; ++i) {
    const int64_t row = t.row + thread_row * T::TM + i;
#pragma unroll
    for (int j = 0; j < T::TN; ++j) {
      const int64_t col = t.col + thread_col * T::TN + j;
      if (row < m && col < n) C[row * n + col] = acc[i][j];
    }
  }
}

template <class T>
void launch_tiling(const Gemm& g) {
  const TileGrid grid = tile_grid(g.m, g.n, T::BM, T::BN);
  sgemm_2d_blocktiling<T><<<grid.blocks, T::kThreads, 0, g.stream>>>(g.A, g.B, g.C, g.m, g.n, g.k,
                                                                     grid.tiles_n);
  CUDA_CHECK_LAUNCH();
}

// The post's tiling. MinBlocks = 2 holds ptxas to 128 registers per thread, the post's two blocks
// per SM; one more register and a single block would fit.
using PostTiling = Tiling<128, 128, 8, 8, 8, 2>;

void launch(const Gemm& g) { launch_tiling<PostTiling>(g); }

const Step kStep{"sgemm/05_2d_blocktiling", launch};
LADDER_STEP(kStep);

}  // namespace sgemm::blocktiling_2d
