// sgemm step 07: 128-bit loads — float4 from global memory, A stored transposed in shared memory.
// Step 05's tiling (128 x 128 block tile, BK = 8, an 8 x 8 patch per thread, 256 threads), with
// every load 16 bytes wide: each thread copies one float4 of the A tile and one of the B tile per k
// step (LDG.E.128: a quarter of step 05's load instructions), and reads its fragments as float4
// from shared memory (LDS.128). For that the A tile is stored transposed, As[k][m]: a thread's 8 rows
// of A at one k are 8 consecutive floats, two LDS.128. (ptxas already read step 05's As[row][p] 4 k at
// a time along a row — the same LDS.128 count, but 32 A values held in registers instead of 8; the
// transposed tile is the layout steps 08+ build on.) The transpose happens on the way in: the float4
// along k of A[row][k0..k0+3] is scattered into 4 rows of As.
// Changes from step 05: float4 global loads and stores, As[BK][BM] (transposed), fragment reads as
// float4; the same thread layout, so a thread's 8 B columns are 8 consecutive floats too.
// Costs: the transposing stores are 4 scalar STS per float4 and land 2 threads per bank (ncu:
// l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum); the fragment reads of a warp (16
// threads across a row of Bs, 32 bytes apart) are 4-way bank conflicts — step 08 removes both.
// 16-byte loads need 16-byte aligned rows: with K % 4 != 0 (rows of A) or N % 4 != 0 (rows of B
// and C) the kernel is instantiated with scalar loads for that operand; every load is guarded, so
// edge tiles read zeros past the matrix. 127 registers (128 with scalar A loads; MinBlocks 2 caps
// them at 128), no spills (ptxas, sm_90).
// Source: beyond the posts ("How to optimize SGEMM on NVIDIA GPUs" calls this vectorized memory
// access with a transposed A tile). Run: build/bin/sgemm_07_vectorized --m 4096 --n 4096 --k 4096
#include "sgemm/sgemm.cuh"

namespace sgemm::vectorized {

constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;  // step 05's tiling
constexpr int kThreads = (BM / TM) * (BN / TN);             // 256
constexpr int kMinBlocks = 2;                               // <= 128 registers: 2 blocks per SM
static_assert(TM % 4 == 0 && TN % 4 == 0, "fragments are read as float4");
static_assert(BM * BK == 4 * kThreads && BK * BN == 4 * kThreads,
              "each thread copies exactly one float4 of each tile per k step");

// VecA: rows of A are 16-byte aligned (k % 4 == 0); VecB: rows of B and C are (n % 4 == 0).
template <bool VecA, bool VecB>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    sgemm_vectorized(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                     int64_t m, int64_t n, int64_t k, int64_t tiles_n) {
  constexpr int AW = VecA ? 4 : 1, BW = VecB ? 4 : 1;  // floats per global load
  __shared__ __align__(16) float As[BK][BM];  // A transposed: As[p][row]
  __shared__ __align__(16) float Bs[BK][BN];
  const TileOrigin t = tile_origin(tiles_n, BM, BN);
  const int tid = threadIdx.x;
  const int ty = tid / (BN / TN), tx = tid % (BN / TN);  // this thread's patch: rows ty*TM.., cols tx*TN..

  float acc[TM][TN] = {};
  for (int64_t k0 = 0; k0 < k; k0 += BK) {
    // Step 1: global -> shared. A: a float4 along k, scattered into 4 rows of As (the transpose).
#pragma unroll
    for (int i = 0; i < BM * BK / (AW * kThreads); ++i) {
      const int f = tid + i * kThreads;
      const int row = f / (BK / AW), p = f % (BK / AW) * AW;
      const int64_t gr = t.row + row, gk = k0 + p;
      const bool in = gr < m && gk < k;  // VecA: k % 4 == 0, so the whole float4 is inside
      if constexpr (VecA) {
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (in) v = *reinterpret_cast<const float4*>(A + gr * k + gk);
        As[p + 0][row] = v.x;
        As[p + 1][row] = v.y;
        As[p + 2][row] = v.z;
        As[p + 3][row] = v.w;
      } else {
        As[p][row] = in ? A[gr * k + gk] : 0.f;
      }
    }
#pragma unroll
    for (int i = 0; i < BK * BN / (BW * kThreads); ++i) {
      const int f = tid + i * kThreads;
      const int p = f / (BN / BW), col = f % (BN / BW) * BW;
      const int64_t gk = k0 + p, gc = t.col + col;
      const bool in = gk < k && gc < n;  // VecB: n % 4 == 0
      if constexpr (VecB) {
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (in) v = *reinterpret_cast<const float4*>(B + gk * n + gc);
        *reinterpret_cast<float4*>(&Bs[p][col]) = v;
      } else {
        Bs[p][col] = in ? B[gk * n + gc] : 0.f;
      }
    }
    __syncthreads();

    // Step 2: per p, TM + TN fragment values in TM/4 + TN/4 LDS.128, then TM x TN FFMAs.
#pragma unroll
    for (int p = 0; p < BK; ++p) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; i += 4) {
        const float4 v = *reinterpret_cast<const float4*>(&As[p][ty * TM + i]);
        a[i] = v.x, a[i + 1] = v.y, a[i + 2] = v.z, a[i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < TN; j += 4) {
        const float4 v = *reinterpret_cast<const float4*>(&Bs[p][tx * TN + j]);
        b[j] = v.x, b[j + 1] = v.y, b[j + 2] = v.z, b[j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }

  // Step 3: registers -> C, float4 stores where rows of C are 16-byte aligned.
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int64_t gr = t.row + ty * TM + i;
    if (gr >= m) continue;
    float* c_row = C + gr * n;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const int64_t gc = t.col + tx * TN + j;
      if constexpr (VecB) {
        if (gc < n)
          *reinterpret_cast<float4*>(c_row + gc) =
              make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      } else {
#pragma unroll
        for (int c = 0; c < 4; ++c)
          if (gc + c < n) c_row[gc + c] = acc[i][j + c];
      }
    }
  }
}

void launch(const Gemm& g) {
  const TileGrid grid = tile_grid(g.m, g.n, BM, BN);
  const bool vec_a = g.k % 4 == 0, vec_b = g.n % 4 == 0;  // cudaMalloc bases are 256-byte aligned
  auto kernel = vec_a ? (vec_b ? sgemm_vectorized<true, true> : sgemm_vectorized<true, false>)
                      : (vec_b ? sgemm_vectorized<false, true> : sgemm_vectorized<false, false>);
  kernel<<<grid.blocks, kThreads, 0, g.stream>>>(g.A, g.B, g.C, g.m, g.n, g.k, grid.tiles_n);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"sgemm/07_vectorized", launch};
LADDER_STEP(kStep);

}  // namespace sgemm::vectorized
