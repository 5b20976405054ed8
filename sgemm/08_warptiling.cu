// sgemm step 08: warp tiling — block tile -> warp tile -> thread tile.
// The 128 x 128 block tile is split into 8 warp tiles of 64 x 32; each warp's 32 lanes split theirs
// into 8 x 8 patches, but a lane's patch is no longer 8 consecutive rows and columns: it is 2 x 2
// sub-tiles of 4 x 4 spread over the warp tile (rows i*32 + lm*4 + 0..3, columns j*16 + ln*4 + 0..3,
// lane = lm*4 + ln). At one k a warp then reads its 64 values of A as 2 LDS.128 whose 8 distinct
// addresses are 128 contiguous bytes (one wavefront, the other lanes broadcast), and its 32 values
// of B as 2 LDS.128 over 64 contiguous bytes: no bank conflicts, where step 07's lanes, 32 bytes
// apart along a row, hit each bank 4 times. The hierarchy is also what maps onto the hardware: a
// warp's operands stay in a small patch of shared memory, and the thread tile lives in registers.
// Also: As rows are padded to BM + 4 floats and the A tile is copied in groups that cover one
// 32-byte sector per row with 32 different banks per warp (ATileMap), so the transposing stores
// are nearly conflict-free too (ncu on the H100, 2026-11-27, 4096^3: shared-load conflicts 29 k of 403 M
// wavefronts, shared-store conflicts 6.1 M, from 268 M and 21.9 M in step 07).
// Changes from step 07: WarpTile (fragment offsets, outer product, the store) and the copy maps;
// the k loop itself is unchanged — still one shared buffer and two barriers per k step.
// Costs: none in registers (127, under MinBlocks 2's cap of 128, no spills); 128 bytes more shared
// memory for the pad (BK rows of 4 floats).
// Source: beyond the posts (siboehm, "How to Optimize a CUDA Matmul Kernel for cuBLAS-like
// Performance", kernel 10 "warptiling"; CUTLASS's threadblock/warp/thread hierarchy).
// Run: build/bin/sgemm_08_warptiling --m 4096 --n 4096 --k 4096
#include "sgemm/sgemm.cuh"

namespace sgemm::warptiling {

// ---- The three-level tiling (steps 08-10 reuse all of this) ---------------------------------------
//
// Block tile BM x BN, k steps of BK, warp tile WM x WN, thread tile TM x TN = RM x RN sub-tiles of
// 4 x 4: lane (lm, ln) of a warp owns rows i*WSUB_M + lm*4 + {0..3} (i < RM) and columns
// j*WSUB_N + ln*4 + {0..3} (j < RN) of its warp tile. Shared layout: As[k][BM + 4] (A transposed,
// padded), Bs[k][BN].
template <int BM_, int BN_, int BK_, int WM_, int WN_, int TM_, int TN_>
struct WarpTile {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, TM = TM_, TN = TN_;
  static constexpr int WARPS_N = BN / WN, WARPS = (BM / WM) * WARPS_N, THREADS = WARPS * 32;
  static constexpr int RM = TM / 4, RN = TN / 4;
  static constexpr int WSUB_M = WM / RM, WSUB_N = WN / RN;
  static constexpr int LANES_M = WSUB_M / 4, LANES_N = WSUB_N / 4;
  static constexpr int AS_LD = BM + 4;  // floats per k-row of As: the pad spreads the transposing stores
  static constexpr int BS_LD = BN;
  static constexpr int AS_TILE = BK * AS_LD, BS_TILE = BK * BS_LD;
  static_assert(BM % WM == 0 && BN % WN == 0, "warps tile the block tile");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "fragments are read as float4 (LDS.128)");
  static_assert(WM % RM == 0 && WN % RN == 0 && WSUB_M % 4 == 0 && WSUB_N % 4 == 0, "4 x 4 sub-tiles");
  static_assert(LANES_M * LANES_N == 32, "a warp's 32 lanes cover a sub-tile grid exactly");
  static_assert(LANES_M <= 8 && LANES_N <= 8, "a fragment read of a warp stays within 128 bytes");
  static_assert(BM % 32 == 0 && BK % 8 == 0, "the conflict-free copy maps below");

  int a_off, b_off;  // this lane's first column of As / Bs within a k-row
  __device__ __forceinline__ WarpTile(int warp, int lane) {
    const int lm = lane / LANES_N, ln = lane % LANES_N;
    a_off = warp / WARPS_N * WM + lm * 4;
    b_off = warp % WARPS_N * WN + ln * 4;
  }

  // a[TM], b[TN] <- k-row p of the As / Bs tiles: RM + RN LDS.128.
  __device__ __forceinline__ void load_frag(float (&a)[TM], float (&b)[TN], const float* as,
                                            const float* bs, int p) const {
#pragma unroll
    for (int i = 0; i < RM; ++i) {
      const float4 v = *reinterpret_cast<const float4*>(as + p * AS_LD + a_off + i * WSUB_M);
      a[4 * i] = v.x, a[4 * i + 1] = v.y, a[4 * i + 2] = v.z, a[4 * i + 3] = v.w;
    }
#pragma unroll
    for (int j = 0; j < RN; ++j) {
      const float4 v = *reinterpret_cast<const float4*>(bs + p * BS_LD + b_off + j * WSUB_N);
      b[4 * j] = v.x, b[4 * j + 1] = v.y, b[4 * j + 2] = v.z, b[4 * j + 3] = v.w;
    }
  }

  static __device__ __forceinline__ void outer_product(float (&acc)[TM][TN], const float (&a)[TM],
                                                       const float (&b)[TN]) {
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
  }

  // acc -> C for the block tile at (row0, col0); Vec: rows of C are 16-byte aligned (n % 4 == 0).
  template <bool Vec>
  __device__ __forceinline__ void store(float* C, const float (&acc)[TM][TN], int64_t row0,
                                        int64_t col0, int64_t m, int64_t n, int64_t ldc) const {
#pragma unroll
    for (int i = 0; i < RM; ++i)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int64_t gr = row0 + a_off + i * WSUB_M + r;
        if (gr >= m) continue;
        float* c_row = C + gr * ldc;
#pragma unroll
        for (int j = 0; j < RN; ++j) {
          const int64_t gc = col0 + b_off + j * WSUB_N;
          const float* v = &acc[4 * i + r][4 * j];
          if constexpr (Vec) {
            if (gc < n) *reinterpret_cast<float4*>(c_row + gc) = make_float4(v[0], v[1], v[2], v[3]);
          } else {
#pragma unroll
            for (int c = 0; c < 4; ++c)
              if (gc + c < n) c_row[gc + c] = v[c];
          }
        }
      }
  }
};

// Which elements of the BM x BK A tile a thread copies, W floats at a time (W = 4: a float4 along
// k; W = 1: single floats). A warp covers KCH chunks of W along k (32 bytes: one sector per row) by
// 32 / KCH rows, so its transposing stores As[k][row] (row stride BM + 4) hit 32 different banks.
// Copy j of a thread is row row0 + j * ROW_STEP, k offset k (the same for every j).
template <int BM, int BK, int THREADS, int W>
struct ATileMap {
  static constexpr int WARPS = THREADS / 32;
  static constexpr int KCH = 8 / W;                    // chunks along k per warp row: 32 bytes
  static constexpr int ROWS_PER_WARP = 32 / KCH;       // 16 (W = 4) or 4 (W = 1)
  static constexpr int KGROUPS = BK / (KCH * W);       // warps side by side along k
  static_assert(BK % (KCH * W) == 0 && WARPS % KGROUPS == 0, "the warps split the k range evenly");
  static constexpr int ROW_STEP = ROWS_PER_WARP * (WARPS / KGROUPS);
  static constexpr int COPIES = BM / ROW_STEP;
  static_assert(BM % ROW_STEP == 0, "every thread copies the same number of A elements");
  int row0, k;
  __device__ __forceinline__ ATileMap(int warp, int lane) {
    k = (lane % KCH + KCH * (warp % KGROUPS)) * W;
    row0 = lane / KCH + ROWS_PER_WARP * (warp / KGROUPS);
  }
};

// The BK x BN B tile, W floats along n per copy: consecutive threads take consecutive chunks of a
// row (one coalesced run per warp). Copy j of thread tid is (row(tid, j), col(tid, j)).
template <int BN, int BK, int THREADS, int W>
struct BTileMap {
  static constexpr int CPR = BN / W;  // chunks per row
  static_assert(CPR % THREADS == 0 || THREADS % CPR == 0, "rows split evenly between the threads");
  static constexpr int COPIES = BK * CPR / THREADS;
  static_assert(COPIES * THREADS == BK * CPR, "every thread copies the same number of B chunks");
  __host__ __device__ static constexpr int row(int tid, int j) {
    return THREADS % CPR == 0 ? tid / CPR + j * (THREADS / CPR) : j / (CPR / THREADS);
  }
  __host__ __device__ static constexpr int col(int tid, int j) {
    return THREADS % CPR == 0 ? tid % CPR * W : (tid + j % (CPR / THREADS) * THREADS) * W;
  }
};

// ---- Step 08's kernel -----------------------------------------------------------------------------

template <class T, int MinBlocks, bool VecA, bool VecB>
__global__ void __launch_bounds__(T::THREADS, MinBlocks)
    sgemm_warptiling(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                     int64_t m, int64_t n, int64_t k, int64_t tiles_n) {
  using AMap = ATileMap<T::BM, T::BK, T::THREADS, VecA ? 4 : 1>;
  using BMap = BTileMap<T::BN, T::BK, T::THREADS, VecB ? 4 : 1>;
  __shared__ __align__(16) float As[T::AS_TILE];  // [BK][AS_LD], A transposed
  __shared__ __align__(16) float Bs[T::BS_TILE];  // [BK][BS_LD]
  const TileOrigin t = tile_origin(tiles_n, T::BM, T::BN);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const T wt(warp, lane);
  const AMap am(warp, lane);

  float acc[T::TM][T::TN] = {};
  float a[T::TM], b[T::TN];
  for (int64_t k0 = 0; k0 < k; k0 += T::BK) {
    // Step 1: global -> shared (A transposed), zeros past the edges of A and B.
#pragma unroll
    for (int j = 0; j < AMap::COPIES; ++j) {
      const int row = am.row0 + j * AMap::ROW_STEP;
      const int64_t gr = t.row + row, gk = k0 + am.k;
      const bool in = gr < m && gk < k;
      if constexpr (VecA) {
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (in) v = *reinterpret_cast<const float4*>(A + gr * k + gk);
        As[(am.k + 0) * T::AS_LD + row] = v.x;
        As[(am.k + 1) * T::AS_LD + row] = v.y;
        As[(am.k + 2) * T::AS_LD + row] = v.z;
        As[(am.k + 3) * T::AS_LD + row] = v.w;
      } else {
        As[am.k * T::AS_LD + row] = in ? A[gr * k + gk] : 0.f;
      }
    }
#pragma unroll
    for (int j = 0; j < BMap::COPIES; ++j) {
      const int p = BMap::row(tid, j), col = BMap::col(tid, j);
      const int64_t gk = k0 + p, gc = t.col + col;
      const bool in = gk < k && gc < n;
      if constexpr (VecB) {
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (in) v = *reinterpret_cast<const float4*>(B + gk * n + gc);
        *reinterpret_cast<float4*>(&Bs[p * T::BS_LD + col]) = v;
      } else {
        Bs[p * T::BS_LD + col] = in ? B[gk * n + gc] : 0.f;
      }
    }
    __syncthreads();

    // Step 2: per p, RM + RN conflict-free LDS.128, then TM x TN FFMAs from registers.
#pragma unroll
    for (int p = 0; p < T::BK; ++p) {
      wt.load_frag(a, b, As, Bs, p);
      T::outer_product(acc, a, b);
    }
    __syncthreads();
  }

  // Step 3: registers -> C.
  wt.template store<VecB>(C, acc, t.row, t.col, m, n, n);
}

using Tiling = WarpTile<128, 128, 8, 64, 32, 8, 8>;  // 8 warps of 64 x 32, 8 x 8 per thread
constexpr int kMinBlocks = 2;                         // <= 128 registers: 2 blocks per SM

void launch(const Gemm& g) {
  const TileGrid grid = tile_grid(g.m, g.n, Tiling::BM, Tiling::BN);
  const bool vec_a = g.k % 4 == 0, vec_b = g.n % 4 == 0;  // cudaMalloc bases are 256-byte aligned
  auto kernel = vec_a ? (vec_b ? sgemm_warptiling<Tiling, kMinBlocks, true, true>
                               : sgemm_warptiling<Tiling, kMinBlocks, true, false>)
                      : (vec_b ? sgemm_warptiling<Tiling, kMinBlocks, false, true>
                               : sgemm_warptiling<Tiling, kMinBlocks, false, false>);
  kernel<<<grid.blocks, Tiling::THREADS, 0, g.stream>>>(g.A, g.B, g.C, g.m, g.n, g.k, grid.tiles_n);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"sgemm/08_warptiling", launch};
LADDER_STEP(kStep);

}  // namespace sgemm::warptiling
