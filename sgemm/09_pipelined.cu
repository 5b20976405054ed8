// sgemm step 09: a cp.async pipeline — tiles k+1 .. k+S-1 in flight while tile k is multiplied.
// Step 08 loads a tile, waits at a barrier, multiplies, waits again: the SM idles while each tile
// travels from L2, unless other blocks happen to fill the gap. Here a ring of S shared-memory stages
// is filled by cp.async (global -> shared directly, LDGSTS in SASS: no registers, no STS, the copy
// runs while the thread goes on): S - 1 tiles are requested before the first is used, and every k
// step requests the tile S - 1 ahead into the stage freed one step earlier. cp.async.wait_group
// (S - 2) plus one barrier per k step makes the next tile visible and the stage to refill free.
// The fragments are double-buffered in registers too: the source loads those of k+1 before the
// FFMAs of k (ptxas spreads the LDS.128 among k's FFMAs, most 65-69 instructions before their use),
// so shared-memory latency hides behind 64-128 independent FFMAs.
// A goes through 4-byte copies (a 16-byte one cannot transpose), B through 16-byte copies when
// n % 4 == 0. Edges: a copy with src-size 0 writes zeros, so out-of-range elements cost no branch;
// interior tiles take a copy path with no predicates at all.
// Changes from step 08: the copy (cp.async into a ring), the k loop (one barrier, prefetch of the
// next fragments), the tile shapes: tunable, --tile NAME (BMxBNxBK_TMxTN_wWMxWN_sSTAGES), the
// default computed from the device and the shape (default_choice: the tilings that fit, their blocks
// per SM, waves over the GPU's SMs — 128 x 256 tiles where they fill whole waves, 128 x 128 where
// they would leave a last wave nearly empty). The tile loop is a device function (pipelined_tile_at:
// any tile, A's row pitch apart from k, the accumulators handed to the caller's finish) that steps
// 10-12 reuse on slices of k. Needs cp.async: sm_80 or newer (exit 2 on older GPUs).
// Costs: shared memory S x (BK (BM + 4) + BK BN) x 4 bytes (dynamic, > 48 KB needs an opt-in);
// registers for the second fragment buffer (2 (TM + TN)); the 8 x 16 thread tiles of the 128 x 256
// tilings take 245-255 registers and one 256-thread block (8 warps, 12.5% occupancy) per SM: 128
// independent FFMAs per warp and k step hide latency instead of more warps. No tiling spills
// (ptxas, sm_90).
// Source: beyond the posts (NVIDIA, CUDA C++ Programming Guide, "Asynchronous Data Copies";
// CUTLASS's multistage mainloop). Run: build/bin/sgemm_09_pipelined --m 4096 [--tile NAME]
#include "08_warptiling.cu"  // WarpTile, ATileMap, BTileMap, unchanged
#include "common/cp_async.cuh"

#include <algorithm>
#include <string>
#include <type_traits>

namespace sgemm::pipelined {

using warptiling::ATileMap;
using warptiling::BTileMap;
using warptiling::WarpTile;

// The tile of C = A·B (m x n, inner dimension k) at origin t: the whole pipelined k loop, then
// finish(wt, acc, c_tile, m_left, n_left) with the accumulators (pipelined_tile below stores them to
// C). A's rows are lda floats apart (k for a whole GEMM; steps 10 and 12 run this on slices of k).
// A device function so that the kernels of steps 10 and 12 run it unchanged; sgemm_pipelined below
// is its kernel here.
template <class T, int Stages, bool VecB, class Finish>
__device__ __forceinline__ void pipelined_tile_at(TileOrigin t, const float* __restrict__ A, int64_t lda,
                                                  const float* __restrict__ B, float* __restrict__ C,
                                                  int64_t m, int64_t n, int64_t k, Finish&& finish) {
  static_assert(Stages >= 2, "at least one tile in flight while another is multiplied");
  constexpr int BM = T::BM, BN = T::BN, BK = T::BK;
  using AMap = ATileMap<BM, BK, T::THREADS, 1>;  // 4-byte copies: the transpose needs single floats
  using BMap = BTileMap<BN, BK, T::THREADS, VecB ? 4 : 1>;
  extern __shared__ __align__(16) float smem[];
  float* const As = smem;                      // [Stages][BK][AS_LD]: A transposed
  float* const Bs = smem + Stages * T::AS_TILE;  // [Stages][BK][BS_LD]

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

  // Step 4: registers -> C (finish).
  finish(wt, acc, c_tile, m_left, n_left);
}

// This block's tile (blockIdx.x, row by row), stored to C.
template <class T, int Stages, bool VecB>
__device__ __forceinline__ void pipelined_tile(const float* __restrict__ A, int64_t lda,
                                               const float* __restrict__ B, float* __restrict__ C,
                                               int64_t m, int64_t n, int64_t k, int64_t tiles_n) {
  pipelined_tile_at<T, Stages, VecB>(
      tile_origin(tiles_n, T::BM, T::BN), A, lda, B, C, m, n, k,
      [n](const T& wt, const float (&acc)[T::TM][T::TN], float* c_tile, int m_left, int n_left) {
        wt.template store<VecB>(c_tile, acc, 0, 0, m_left, n_left, n);
      });
}

template <class T, int Stages, int MinBlocks, bool VecB>
__global__ void __launch_bounds__(T::THREADS, MinBlocks)
    sgemm_pipelined(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                    int64_t m, int64_t n, int64_t k, int64_t tiles_n) {
  pipelined_tile<T, Stages, VecB>(A, k, B, C, m, n, k, tiles_n);
}

// The shared memory of a tiling's ring: Stages tiles of A and of B (steps 09 and 10).
template <class T, int Stages>
constexpr int ring_bytes() {
  return Stages * (T::AS_TILE + T::BS_TILE) * static_cast<int>(sizeof(float));
}

// A tiling is launched as either of two kernels (16-byte or 4-byte copies of B); steps 09 and 10
// ask these two questions of both.
// Allows both kernels `smem` bytes of shared memory (more than 48 KB needs an opt-in), or throws
// UnsupportedError (exit 2) naming `what` where this GPU's blocks cannot have that much.
inline void configure_tiling(const ladder::DeviceInfo& dev, const void* vec_b, const void* scalar_b,
                             int smem, const char* what) {
  for (const void* kernel : {vec_b, scalar_b}) ladder::require_shared_memory(kernel, smem, dev, what);
}
// How many blocks of the tiling one SM of this GPU holds: the fewer of the two kernels'
// (ladder::blocks_per_sm: registers, shared memory, threads and a device profile's limits; 0 when
// the shared memory does not fit one block).
inline int tiling_blocks_per_sm(const ladder::DeviceInfo& dev, const void* vec_b, const void* scalar_b,
                                int threads, int smem) {
  return std::min(ladder::blocks_per_sm(dev, vec_b, threads, smem),
                  ladder::blocks_per_sm(dev, scalar_b, threads, smem));
}

// One tiling: its shape, its launcher, and how many of its blocks one SM of this GPU holds.
template <class T, int Stages, int MinBlocks>
struct Pipelined {
  static constexpr int kSmem = ring_bytes<T, Stages>();
  // Its two kernels, B copied in 16-byte or 4-byte pieces.
  static const void* vec_b() { return reinterpret_cast<const void*>(sgemm_pipelined<T, Stages, MinBlocks, true>); }
  static const void* scalar_b() { return reinterpret_cast<const void*>(sgemm_pipelined<T, Stages, MinBlocks, false>); }

  static void configure(const ladder::DeviceInfo& dev) {
    configure_tiling(dev, vec_b(), scalar_b(), kSmem, "the pipelined tile");
  }
  // Once per process.
  static int blocks_per_sm(const ladder::DeviceInfo& dev) {
    static const int blocks = tiling_blocks_per_sm(dev, vec_b(), scalar_b(), T::THREADS, kSmem);
    return blocks;
  }

  static void launch(const Gemm& g) {
    configure(*g.dev);
    const TileGrid grid = tile_grid(g.m, g.n, T::BM, T::BN);
    auto kernel = g.n % 4 == 0 ? sgemm_pipelined<T, Stages, MinBlocks, true>  // 256-byte aligned bases
                               : sgemm_pipelined<T, Stages, MinBlocks, false>;
    kernel<<<grid.blocks, T::THREADS, kSmem, g.stream>>>(g.A, g.B, g.C, g.m, g.n, g.k, grid.tiles_n);
    CUDA_CHECK_LAUNCH();
  }
};

struct Candidate {
  const char* name;
  int bm, bn, bk, stages, tm, tn, threads, smem;
  LaunchFn launch;
  int (*blocks_per_sm)(const ladder::DeviceInfo& dev);
  int k_in_flight() const { return bk * stages; }  // k of A and B the ring holds
};

template <class T, int Stages, int MinBlocks>
constexpr Candidate tiling(const char* name) {
  using P = Pipelined<T, Stages, MinBlocks>;
  return {name, T::BM, T::BN, T::BK, Stages, T::TM, T::TN, T::THREADS, P::kSmem, P::launch, P::blocks_per_sm};
}

// name: BM x BN x BK _ TM x TN _ w WM x WN _ s Stages. MinBlocks: what __launch_bounds__ leaves
// registers for (8 x 8 tiles of 256 threads: 2 blocks, <= 128 registers; 8 x 16 and 16 x 8 tiles:
// ~240, one 256-thread or two 128-thread blocks per SM). Registers and shared memory per block in
// the chapter's table.
const Candidate kCandidates[] = {
    tiling<WarpTile<128, 128, 8, 64, 32, 8, 8>, 3, 2>("128x128x8_8x8_w64x32_s3"),
    tiling<WarpTile<128, 128, 16, 64, 32, 8, 8>, 2, 2>("128x128x16_8x8_w64x32_s2"),
    tiling<WarpTile<128, 128, 16, 64, 32, 8, 8>, 3, 1>("128x128x16_8x8_w64x32_s3"),
    tiling<WarpTile<128, 128, 8, 64, 64, 16, 8>, 3, 2>("128x128x8_16x8_w64x64_s3"),
    tiling<WarpTile<128, 256, 16, 64, 64, 8, 16>, 2, 1>("128x256x16_8x16_w64x64_s2"),
    tiling<WarpTile<128, 256, 32, 64, 64, 8, 16>, 3, 1>("128x256x32_8x16_w64x64_s3"),
};
constexpr const char* kId = "sgemm/09_pipelined";

// ---- The default: a rule computed from the device ------------------------------------------------
//
// No table per GPU: every number below is read off the device (common/device.h) — which tilings fit
// (shared memory per block), how many blocks of each one SM holds (the occupancy calculator, under a
// profile its limits), and so how many slots the GPU has (SMs x blocks per SM). The shape then falls
// into a size class, the post's waves as a rule. A 128 x 256 block at one per SM does the work of
// two 128 x 128 blocks at two per SM, so their wave counts compare directly:
//   few     fewer medium tiles than the GPU has slots for them: under one wave. Each block is alone
//           on its SM, so the medium tiling of 256 threads with the most k in flight (BK x stages)
//           hides the most latency (step 10 splits k instead);
//   large   the large tile, unless it needs more waves than the medium one; from k = kLongK on the
//           large tiling with the most k in flight that fits (fewer barriers per FMA), below it the
//           one with the least (a shorter prologue, paid once per tile);
//   medium  otherwise: the medium tiling with the largest thread tile (the most FFMAs per shared load).
// "large" is the largest block tile among the tilings that fit, "medium" the others (128 x 128).
// On the H100 (132 SMs, 227 KB per block) this picks what the tuning sweep found fastest at each
// shape it measured: 4096^3 -> large, long k (512 tiles: 4 waves of 132; 1,024 medium ones: 4 of
// 264); 4000 x 3000 x 2000 -> large (3 waves each); 4095 x 4097 x 1023 -> medium (544 large tiles
// are 5 waves, 1,056 medium ones 4); 1024 x 1024 x 8192 -> few (64 tiles for 264 slots). kLongK lies
// between the measured k = 2000 and 4096 (a shape's size, not a GPU's).
constexpr int64_t kLongK = 3072;

enum class SizeClass { few, large, medium, only };
struct Choice {
  const Candidate* tiling;
  SizeClass size_class;
  int64_t tiles, slots;          // of the chosen tiling
  int64_t medium_tiles, medium_slots, large_tiles, large_slots;  // what the rule compared
};

inline int64_t tiles_of(const Gemm& g, const Candidate& c) {
  return ((g.m + c.bm - 1) / c.bm) * ((g.n + c.bn - 1) / c.bn);
}
inline int64_t slots_of(const Gemm& g, const Candidate& c) {
  return int64_t(g.dev->sm_count) * c.blocks_per_sm(*g.dev);
}
inline int64_t waves_of(const Gemm& g, const Candidate& c) {
  return (tiles_of(g, c) + slots_of(g, c) - 1) / slots_of(g, c);
}

Choice default_choice(const Gemm& g) {
  const Candidate *few = nullptr, *medium = nullptr, *large_deep = nullptr, *large_short = nullptr;
  int largest = 0;
  for (const Candidate& c : kCandidates)
    if (c.blocks_per_sm(*g.dev) > 0) largest = std::max(largest, c.bm * c.bn);
  for (const Candidate& c : kCandidates) {
    if (c.blocks_per_sm(*g.dev) == 0) continue;  // more shared memory than a block may have here
    if (c.bm * c.bn == largest) {
      if (!large_deep || c.k_in_flight() > large_deep->k_in_flight()) large_deep = &c;
      if (!large_short || c.k_in_flight() < large_short->k_in_flight()) large_short = &c;
    } else {
      if (!medium || c.tm * c.tn > medium->tm * medium->tn) medium = &c;
      if (c.threads == 256 && (!few || c.k_in_flight() > few->k_in_flight())) few = &c;
    }
  }
  if (!large_deep) {
    const Candidate* smallest = &kCandidates[0];
    for (const Candidate& c : kCandidates) smallest = c.smem < smallest->smem ? &c : smallest;
    ladder::refuse_shared_memory(std::string(kId) + " (its smallest tiling, " + smallest->name + ")", smallest->smem,
                                 *g.dev);
  }
  const Candidate* large = g.k >= kLongK ? large_deep : large_short;
  Choice ch{large, SizeClass::only, tiles_of(g, *large), slots_of(g, *large), 0, 0, 0, 0};
  if (!medium) return ch;  // one block-tile size fits: nothing to compare
  if (!few) few = medium;
  ch.medium_tiles = tiles_of(g, *medium), ch.medium_slots = slots_of(g, *medium);
  ch.large_tiles = tiles_of(g, *large), ch.large_slots = slots_of(g, *large);
  if (ch.medium_tiles < ch.medium_slots) ch.tiling = few, ch.size_class = SizeClass::few;
  else if (waves_of(g, *large) <= waves_of(g, *medium)) ch.size_class = SizeClass::large;
  else ch.tiling = medium, ch.size_class = SizeClass::medium;
  ch.tiles = tiles_of(g, *ch.tiling), ch.slots = slots_of(g, *ch.tiling);
  return ch;
}

// "128x256x32_8x16_w64x64_s3: large, long k — 512 tiles of 128x256 in 132 slots (132 SMs x 1) ..."
std::string explain(const Gemm& g, const Choice& ch) {
  auto waves = [](int64_t tiles, int64_t slots) { return std::to_string((tiles + slots - 1) / slots); };
  const Candidate& c = *ch.tiling;
  const std::string per_sm = std::to_string(c.blocks_per_sm(*g.dev));
  std::string s = std::string(c.name) + ": ";
  const std::string cmp = std::to_string(ch.large_tiles) + " large tiles in " + std::to_string(ch.large_slots) +
                          " slots = " + waves(ch.large_tiles, ch.large_slots) + " waves, " +
                          std::to_string(ch.medium_tiles) + " medium in " + std::to_string(ch.medium_slots) +
                          " = " + waves(ch.medium_tiles, ch.medium_slots);
  switch (ch.size_class) {
    case SizeClass::few:
      s += "few tiles (" + std::to_string(ch.medium_tiles) + " medium tiles for " + std::to_string(ch.medium_slots) +
           " slots: under one wave), the 256-thread medium tiling with the most k in flight";
      break;
    case SizeClass::large:
      s += std::string("large tiles (") + cmp + ")" +
           (g.k >= kLongK ? ", long k: the most k in flight that fits" : ", short k: the shortest prologue");
      break;
    case SizeClass::medium:
      s += "medium tiles (" + cmp + "), the largest thread tile";
      break;
    case SizeClass::only:
      s += "the only block-tile size that fits";
      break;
  }
  return s + "; " + std::to_string(g.dev->sm_count) + " SMs x " + per_sm + " block(s) per SM, " +
         std::to_string(c.smem) + " B of shared memory per block (" +
         std::to_string(g.dev->smem_per_block_optin) + " allowed)";
}

void launch(const Gemm& g) {
  if (!g.tile.empty()) return pick_candidate(kId, g.tile, kCandidates, "").launch(g);
  default_choice(g).tiling->launch(g);
}

std::string describe(const Gemm& g) {
  if (!g.tile.empty()) return g.tile + " (--tile)";
  return explain(g, default_choice(g));
}

const Step kStep{kId, launch, nullptr, /*tunable=*/true, /*workspace_bytes=*/nullptr, describe};
LADDER_STEP(kStep);

}  // namespace sgemm::pipelined
