// sgemm step 09: a cp.async pipeline — tiles k+1 .. k+S-1 in flight while tile k is multiplied.
// Step 08 loads a tile, waits at a barrier, multiplies, waits again: the SM idles while each tile
// travels from L2, unless other blocks happen to fill the gap. Here a ring of S shared-memory stages
// is filled by cp.async (global -> shared directly, LDGSTS in SASS: no registers, no STS, the copy
// runs while the thread goes on): S - 1 tiles are requested before the first is used, and every k
// step requests the tile S - 1 ahead into the stage freed one step earlier. cp.async.wait_group
// (S - 2) plus one barrier per k step makes the next tile visible and the stage to refill free.
// The fragments are double-buffered in registers too: the LDS.128 of k+1 issue before the FFMAs
// of k, so shared-memory latency hides behind 64-128 independent FFMAs.
// A goes through 4-byte copies (a 16-byte one cannot transpose), B through 16-byte copies when
// n % 4 == 0. Edges: a copy with src-size 0 writes zeros, so out-of-range elements cost no branch;
// interior tiles take a copy path with no predicates at all.
// Changes from step 08: the copy (cp.async into a ring), the k loop (one barrier, prefetch of the
// next fragments), the tile shapes: tunable, --tile NAME (BMxBNxBK_TMxTN_wWMxWN_sSTAGES), the
// default per GPU and size class from a table (kTuned: 128 x 256 tiles where they fill whole waves,
// 128 x 128 where they would leave a last wave nearly empty). The tile loop is a device function
// (pipelined_tile, with A's row pitch apart from k) that step 10 reuses on slices of k.
// Costs: shared memory S x (BK (BM + 4) + BK BN) x 4 bytes (dynamic, > 48 KB needs an opt-in);
// registers for the second fragment buffer (2 (TM + TN)); 8 x 16 thread tiles take ~240 registers
// and one 256-thread block (8 warps, 12.5% occupancy) per SM: 128 independent FFMAs per warp and k
// step hide latency instead of more warps. No tiling spills (ptxas, sm_90).
// Source: beyond the posts (NVIDIA, CUDA C++ Programming Guide, "Asynchronous Data Copies";
// CUTLASS's multistage mainloop). Run: build/bin/sgemm_09_pipelined --m 4096 [--tile NAME]
#include "08_warptiling.cu"  // WarpTile, ATileMap, BTileMap, unchanged
#include "common/cp_async.cuh"

#include <iterator>
#include <type_traits>

namespace sgemm::pipelined {

using warptiling::ATileMap;
using warptiling::BTileMap;
using warptiling::WarpTile;

// One block's tile of C = A·B (m x n, inner dimension k): the whole pipelined k loop and the store.
// A's rows are lda floats apart (k for a whole GEMM; step 10 runs this on slices of k). A device
// function so that step 10's kernel can run it unchanged; sgemm_pipelined below is its kernel here.
template <class T, int Stages, bool VecB>
__device__ __forceinline__ void pipelined_tile(const float* __restrict__ A, int64_t lda,
                                               const float* __restrict__ B, float* __restrict__ C,
                                               int64_t m, int64_t n, int64_t k, int64_t tiles_n) {
  static_assert(Stages >= 2, "at least one tile in flight while another is multiplied");
  constexpr int BM = T::BM, BN = T::BN, BK = T::BK;
  using AMap = ATileMap<BM, BK, T::THREADS, 1>;  // 4-byte copies: the transpose needs single floats
  using BMap = BTileMap<BN, BK, T::THREADS, VecB ? 4 : 1>;
  extern __shared__ __align__(16) float smem[];
  float* const As = smem;                      // [Stages][BK][AS_LD]: A transposed
  float* const Bs = smem + Stages * T::AS_TILE;  // [Stages][BK][BS_LD]

  const TileOrigin t = tile_origin(tiles_n, BM, BN);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const T wt(warp, lane);
  const AMap am(warp, lane);
  const int64_t ktiles = (k + BK - 1) / BK;
  // The rows and columns of this tile that lie inside C (at most BM, BN: an int is enough).
  const int m_left = static_cast<int>(m - t.row < BM ? m - t.row : BM);
  const int n_left = static_cast<int>(n - t.col < BN ? n - t.col : BN);
  // Tiles 0 .. interior - 1 lie wholly inside A and B: their copies need no predicates.
  const int64_t interior = m_left == BM && n_left == BN ? k / BK : 0;
  float* const c_tile = C + t.row * n + t.col;

  // This thread's copies: A element (row0 + j ROW_STEP, k) and B chunk (row(j), col(j)) of each
  // tile, from source pointers that advance one tile per issue (tiles are issued in order).
  const float* a_next = A + (t.row + am.row0) * lda + am.k;
  const int64_t a_jstride = AMap::ROW_STEP * lda;
  const float* b_next = B + BMap::row(tid, 0) * n + t.col + BMap::col(tid, 0);
  float* const as_dst = As + am.k * T::AS_LD + am.row0;
  float* const bs_dst = Bs + BMap::row(tid, 0) * T::BS_LD + BMap::col(tid, 0);

  // Step 1: issue the copies of tile kt into ring stage `stage` (waited for later). Guard = false:
  // an interior tile, every element in range, no predicates at all.
  auto copy_tile = [&](int64_t kt, int stage, auto guard) {
    constexpr bool Guard = decltype(guard)::value;
    const int k_left = static_cast<int>(k - kt * BK < BK ? k - kt * BK : BK);  // k of this tile in A, B
#pragma unroll
    for (int j = 0; j < AMap::COPIES; ++j) {
      float* dst = as_dst + stage * T::AS_TILE + j * AMap::ROW_STEP;
      const float* src = a_next + j * a_jstride;
      if constexpr (Guard) {
        const bool in = am.k < k_left && am.row0 + j * AMap::ROW_STEP < m_left;
        ladder::cp_async_4(dst, in ? src : A, in);
      } else {
        ladder::cp_async_4(dst, src, true);
      }
    }
#pragma unroll
    for (int j = 0; j < BMap::COPIES; ++j) {
      const int dr = BMap::row(0, j) - BMap::row(0, 0);  // the same for every thread
      const int dc = BMap::col(0, j) - BMap::col(0, 0);
      float* dst = bs_dst + stage * T::BS_TILE + dr * T::BS_LD + dc;
      const float* src = b_next + dr * n + dc;
      bool in = true;
      if constexpr (Guard) {
        in = BMap::row(tid, j) < k_left && BMap::col(tid, j) < n_left;
        if (!in) src = B;
      }
      if constexpr (VecB) ladder::cp_async_16(dst, src, in);
      else ladder::cp_async_4(dst, src, in);
    }
    a_next += BK;
    b_next += BK * n;
  };
  auto issue = [&](int64_t kt, int stage) {
    if (kt < interior) copy_tile(kt, stage, std::false_type{});
    else copy_tile(kt, stage, std::true_type{});
  };

  // Prologue: Stages - 1 tiles in flight; always commit, so that group i holds tile i.
#pragma unroll 1
  for (int s = 0; s < Stages - 1; ++s) {
    if (s < ktiles) issue(s, s);
    ladder::cp_async_commit();
  }
  ladder::cp_async_wait<Stages - 2>();
  __syncthreads();

  float acc[T::TM][T::TN] = {};
  float a[2][T::TM], b[2][T::TN];
  int rs = 0;           // the stage holding tile kt
  int ws = Stages - 1;  // the stage that receives tile kt + Stages - 1
  wt.load_frag(a[0], b[0], As, Bs, 0);
#pragma unroll 1
  for (int64_t kt = 0; kt < ktiles; ++kt) {
#pragma unroll
    for (int p = 0; p < BK; ++p) {
      if (p == BK - 1) {
        // Tile kt+1 has landed (all but the newest Stages - 2 groups are complete), and every
        // thread has read its last fragment of tile kt-1, whose stage the next issue overwrites.
        ladder::cp_async_wait<Stages - 2>();
        __syncthreads();
        rs = rs + 1 == Stages ? 0 : rs + 1;
      }
      // Step 2: the fragments of p+1 (of the next tile's p = 0 at the end) before p's FFMAs.
      wt.load_frag(a[(p + 1) % 2], b[(p + 1) % 2], As + rs * T::AS_TILE, Bs + rs * T::BS_TILE,
                   (p + 1) % BK);
      if (p == 0) {
        if (kt + Stages - 1 < ktiles) issue(kt + Stages - 1, ws);
        ladder::cp_async_commit();
        ws = ws + 1 == Stages ? 0 : ws + 1;
      }
      // Step 3: TM x TN FFMAs.
      T::outer_product(acc, a[p % 2], b[p % 2]);
    }
  }

  // Step 4: registers -> C.
  wt.template store<VecB>(c_tile, acc, 0, 0, m_left, n_left, n);
}

template <class T, int Stages, int MinBlocks, bool VecB>
__global__ void __launch_bounds__(T::THREADS, MinBlocks)
    sgemm_pipelined(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                    int64_t m, int64_t n, int64_t k, int64_t tiles_n) {
  pipelined_tile<T, Stages, VecB>(A, k, B, C, m, n, k, tiles_n);
}

template <class T, int Stages, int MinBlocks>
void launch_pipelined(const Gemm& g) {
  constexpr int kSmem = Stages * (T::AS_TILE + T::BS_TILE) * static_cast<int>(sizeof(float));
  for (const void* k : {reinterpret_cast<const void*>(sgemm_pipelined<T, Stages, MinBlocks, true>),
                        reinterpret_cast<const void*>(sgemm_pipelined<T, Stages, MinBlocks, false>)})
    ladder::require_shared_memory(k, kSmem, *g.dev, "the pipelined tile");
  const TileGrid grid = tile_grid(g.m, g.n, T::BM, T::BN);
  auto kernel = g.n % 4 == 0 ? sgemm_pipelined<T, Stages, MinBlocks, true>  // 256-byte aligned bases
                             : sgemm_pipelined<T, Stages, MinBlocks, false>;
  kernel<<<grid.blocks, T::THREADS, kSmem, g.stream>>>(g.A, g.B, g.C, g.m, g.n, g.k, grid.tiles_n);
  CUDA_CHECK_LAUNCH();
}

// name: BM x BN x BK _ TM x TN _ w WM x WN _ s Stages. MinBlocks: what __launch_bounds__ leaves
// registers for (8 x 8 tiles of 256 threads: 2 blocks, <= 128 registers; 8 x 16 and 16 x 8 tiles:
// ~240, one 256-thread or two 128-thread blocks per SM). Registers and shared memory per block in
// the chapter's table.
const TileCandidate kCandidates[] = {
    {"128x128x8_8x8_w64x32_s3", launch_pipelined<WarpTile<128, 128, 8, 64, 32, 8, 8>, 3, 2>},
    {"128x128x16_8x8_w64x32_s2", launch_pipelined<WarpTile<128, 128, 16, 64, 32, 8, 8>, 2, 2>},
    {"128x128x16_8x8_w64x32_s3", launch_pipelined<WarpTile<128, 128, 16, 64, 32, 8, 8>, 3, 1>},
    {"128x128x8_16x8_w64x64_s3", launch_pipelined<WarpTile<128, 128, 8, 64, 64, 16, 8>, 3, 2>},
    {"128x256x16_8x16_w64x64_s2", launch_pipelined<WarpTile<128, 256, 16, 64, 64, 8, 16>, 2, 1>},
    {"128x256x32_8x16_w64x64_s3", launch_pipelined<WarpTile<128, 256, 32, 64, 64, 8, 16>, 3, 1>},
};
constexpr const char* kId = "sgemm/09_pipelined";

// The default per GPU and size class, from scripts/tune_sgemm.sh on that GPU. The class follows from
// whole waves of blocks (the post's lesson, as a rule): a 128 x 256 block at one per SM does the
// work of two 128 x 128 blocks at two per SM, so their wave counts compare directly.
//   few     fewer medium tiles than the GPU has slots for: under one wave (step 10 splits k instead);
//   large   the large tile, unless it needs more waves than the medium one — with the deeper k step
//           from long_k on (fewer barriers per FMA; short k pays more for its longer prologue);
//   medium  otherwise (e.g. 4095 x 4097: 544 large tiles are 4.1 waves, 1,056 medium ones 4.0).
// On the H100: 4096^3 -> large, long k; 4000 x 3000 x 2000 -> large; 4095 x 4097 x 1023 -> medium;
// 1024 x 1024 x 8192 -> few. Each of those was the fastest candidate at its shape (the chapter); the
// class boundaries between the measured shapes are the rule above, and long_k lies between the
// measured k = 2000 and 4096.
struct TunedTile {
  const char* name;
  int bm, bn, blocks_per_sm;
};
struct Tuned {
  int cc_major, cc_minor, sm_count;  // the GPU
  TunedTile large, medium;
  const char* large_long_k;  // `large`'s block tile with a deeper k step, for k >= long_k
  int64_t long_k;
  const char* few;
};
constexpr Tuned kTuned[] = {
    // NVIDIA H100 80GB HBM3 (SXM5): sm_90, 132 SMs
    {9, 0, 132, {"128x256x16_8x16_w64x64_s2", 128, 256, 1}, {"128x128x8_16x8_w64x64_s3", 128, 128, 2},
     "128x256x32_8x16_w64x64_s3", 3072, "128x128x16_8x8_w64x32_s3"},
};
// A GPU without an entry: 128 registers and 33 KB of shared memory per 256-thread block, two blocks
// per SM on any sm_90 part; on the H100 within a few percent of the tuned choice at every shape
// measured except the few-tile one.
constexpr const char* kFallback = "128x128x16_8x8_w64x32_s2";

const char* default_tile(const Gemm& g) {
  for (const Tuned& e : kTuned) {
    if (e.cc_major != g.dev->cc_major || e.cc_minor != g.dev->cc_minor || e.sm_count != g.dev->sm_count)
      continue;
    auto tiles = [&](const TunedTile& t) { return ((g.m + t.bm - 1) / t.bm) * ((g.n + t.bn - 1) / t.bn); };
    auto waves = [&](const TunedTile& t) {
      const int64_t slots = int64_t(e.sm_count) * t.blocks_per_sm;
      return (tiles(t) + slots - 1) / slots;
    };
    if (tiles(e.medium) < int64_t(e.sm_count) * e.medium.blocks_per_sm) return e.few;
    if (waves(e.large) <= waves(e.medium)) return g.k >= e.long_k ? e.large_long_k : e.large.name;
    return e.medium.name;
  }
  return kFallback;
}

void launch(const Gemm& g) {
  pick_tile(kId, g.tile, kCandidates, std::size(kCandidates), default_tile(g))(g);
}

std::string describe(const Gemm& g) {
  return g.tile.empty() ? std::string(default_tile(g)) + " (the default for this GPU and size)" : g.tile;
}

const Step kStep{kId, launch, nullptr, /*tunable=*/true, /*workspace_bytes=*/nullptr, describe};
LADDER_STEP(kStep);

}  // namespace sgemm::pipelined
