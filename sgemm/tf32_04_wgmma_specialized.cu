// sgemm tf32 step 04: Hopper, the fast one — no transpose, warp-specialised warpgroups, setmaxnreg,
// a persistent tile loop, 256 x 128 tiles.
// Step 03 pays for TF32's K-major rule with a transpose of B before the GEMM, and its thread 0 both
// copies and multiplies. Here:
//   * the transpose is gone, by swapping the operands' roles. wgmma may take its A operand from
//     registers, and registers can be filled from any shared layout. So each block computes a tile
//     of Cᵀ = Bᵀ·Aᵀ: wgmma's A (64 x 8, registers) is a slice of B, read out of B's N-major tile with
//     4 LDS.32 per thread and k8 step, and wgmma's B (8 x 256, shared memory, K-major) is A's tile as
//     TMA wrote it. The accumulators hold Cᵀ: the epilogue writes them to C transposed.
//     B's tile comes as 4 TMA boxes of 32 k-rows x 32 n (128 bytes, 128-byte swizzle); which n a
//     fragment row stands for is ours to choose, and rows r -> n = (r & 3) + 4 (r >> 3 & 1) +
//     16 (r >> 2 & 1) (+ 8 for odd warps) make the 32 lanes of every LDS hit 32 different banks
//     under the swizzle (the chapter has the derivation);
//   * warp specialisation: warpgroup 0 is the producer (one thread issues every TMA copy, S stages
//     ahead, gated by the `empty` barriers), warpgroups 1 and 2 are consumers, each 64 n x 256 m of
//     the tile with m64n256k8 wgmmas (128 accumulators a thread);
//   * setmaxnreg: the producer drops to 40 registers a thread, the consumers rise to 232 (the block
//     starts capped at 168 by __launch_bounds__(384, 1));
//   * a persistent tile loop: one block per SM walks the tiles so the producer loads the next
//     tile's first stages while the consumers still store this one;
//   * a grouped tile order (sgemm.cuh's grouped_tile_origin): bands of square_band_rows tile rows
//     (8 on the H100), walked column by column, so the tiles in work at one time form a square of C
//     and read half the bytes of A and B per k step that a strip two tile rows high does (the row
//     by row order, `_rows`): 91-92% -> 93-97% of cuBLAS TF32 at 8192^3, no change at 4096^3.
// Not done: clusters with TMA multicast (on par with cuBLAS TF32 at 4096^3 without them; perhaps
// what 8192^3 is still missing).
// Edges: TMA zero-fills past the matrices in m, n and k; the stores are predicated. TMA needs rows of
// a multiple of 16 bytes: where k % 4 != 0 (A) or n % 4 != 0 (B) that operand is first copied to a
// workspace with a padded pitch (inside the timed region; 4096^3 needs none).
// Changes from step 03: the operand swap (no transpose), producer/consumer warpgroups, setmaxnreg,
// 256 x 128 tiles, persistent blocks in a grouped order, the transposed epilogue.
// Costs: 3 warpgroups (384 threads), S x 48 KB of shared memory (S = 4: 193 KB), one block per SM;
// 16 LDS.32 per consumer thread per k step of 32; stores of 4 bytes (Cᵀ in registers).
// Needs sm_90a (wgmma, setmaxnreg; its add_step line says NEEDS sm_90a); elsewhere the step exits 2
// naming it. Sizes: m, n and k up to 2^31 - 256 (TMA's 32-bit coordinates); past that, exit 2.
// Source: PTX ISA 8.x, "wgmma.mma_async" (register A), "setmaxnreg", "cp.async.bulk.tensor",
// "mbarrier"; the producer/consumer ("warp-specialized persistent") kernel structure described in
// NVIDIA's CUTLASS 3 documentation (efficient_gemm.md) and in the Hopper tuning guide.
// Run: build/bin/sgemm_tf32_04_wgmma_specialized --m 4096
#include "tf32_03_wgmma_tma.cu"  // pad_rows, round_up (and step 03's own registration, unused here)

namespace sgemm::tf32_wgmma_specialized {

using tf32_wgmma_tma::pad_rows;
using tf32_wgmma_tma::round_up;

constexpr int TM = 256, TN = 128, BK = 32;  // the block's tile: 256 rows of C (m) x 128 columns (n)
constexpr int kConsumers = TN / 64, THREADS = 128 * (1 + kConsumers);
constexpr int kBBoxes = TN / 32;  // B's tile as boxes of 32 k-rows x 32 n (128 bytes)
constexpr uint32_t kATileBytes = TM * BK * 4, kBBoxBytes = 32 * BK * 4;
constexpr uint32_t kStageBytes = kATileBytes + kBBoxes * kBBoxBytes;
constexpr int kProducerRegs = 40, kConsumerRegs = 232;
static_assert(BK * 4 == 128, "a tile row is one 128-byte swizzle row");
static_assert(kProducerRegs * 128 + kConsumerRegs * 128 * kConsumers <= 65536, "the register file");

// A thread's 4 fragment offsets (floats) inside a stage's B boxes, for k8 step 0 (+256 per step):
// a[0] (row g, k t), a[1] (row g + 8, k t), a[2] (row g, k t + 4), a[3] (row g + 8, k t + 4). Element
// (k, nn) of a box lives at k * 32 + ((nn / 4) ^ (k % 8)) * 4 + nn % 4 (the 128-byte swizzle).
struct Fragments {
  int off[4];
  int n_lo;  // the n (within the tile) of fragment rows g; rows g + 8 are n_lo + 4
};
__device__ __forceinline__ Fragments fragment_offsets(int consumer, int warp, int lane) {
  const int g = lane / 4, t = lane % 4, box = 2 * consumer + warp / 2;
  const int nn = (g & 3) + 16 * (g >> 2) + 8 * (warp & 1);
  auto at = [&](int k, int n) { return box * 32 * BK + k * 32 + (((n >> 2) ^ (k & 7)) << 2) + (n & 3); };
  return {{at(t, nn), at(t, nn + 4), at(t + 4, nn), at(t + 4, nn + 4)}, 32 * box + nn};
}

// A consumer waits for each k step's wgmmas (wait_group 0) before it loads the next step's fragments,
// and relies on the other consumer warpgroup to keep the tensor cores busy meanwhile. Loading the
// next fragments while this step's wgmmas run (two fragment buffers, wait_group 1) was measured too:
// ptxas 13.0 then serialises the wgmmas (C7513: registers defined by non-wgmma instructions inside
// a pipeline stage) and the kernel ran 11% slower (the chapter); Overlap = true keeps that variant
// compilable for the comparison, but no candidate instantiates it.
template <int STAGES, bool Overlap>
__global__ void __launch_bounds__(THREADS, 1)
    sgemm_tf32_wgmma_specialized(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                                 float* __restrict__ C, int64_t m, int64_t n, int64_t k, int64_t tiles_m,
                                 int64_t tiles_n, int64_t band_rows) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __trap();  // wgmma and setmaxnreg need sm_90a; the launcher exits 2 before launching elsewhere
#else
  extern __shared__ uint8_t smem_raw[];
  __shared__ uint64_t full[STAGES], empty[STAGES];
  uint8_t* const smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32 % 4, lane = tid % 32;
  const int64_t ktiles = (k + BK - 1) / BK, tiles = tiles_m * tiles_n;

  // Step 1: barriers. full: the producer's arrival + the stage's bytes; empty: one arrival per
  // consumer warp.
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ladder::mbarrier_init(&full[s], 1);
      ladder::mbarrier_init(&empty[s], 4 * kConsumers);
    }
    ladder::mbarrier_init_fence();
  }
  __syncthreads();

  if (wg == 0) {
    // Step 2 (producer warpgroup): few registers; one thread walks this block's tiles and k steps,
    // waiting for each stage to be empty (the first round passes: parity 1 of a fresh barrier) and
    // requesting A's 256 x 32 box and B's four 32 x 32 boxes on its full barrier.
    ladder::setmaxnreg_dec<kProducerRegs>();
    if (warp == 0 && lane == 0) {
      int s = 0;
      uint32_t phase = 0;
      for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const TileOrigin o = grouped_tile_origin(tile, tiles_m, tiles_n, band_rows, TM, TN);
        const int32_t m0 = static_cast<int32_t>(o.row), n0 = static_cast<int32_t>(o.col);
        for (int64_t kt = 0; kt < ktiles; ++kt) {
          ladder::mbarrier_wait(&empty[s], phase ^ 1);
          uint8_t* const stage = smem + s * kStageBytes;
          ladder::mbarrier_arrive_expect_tx(&full[s], kStageBytes);
          const int32_t k0 = static_cast<int32_t>(kt * BK);
          ladder::tma_load_2d(stage, &map_a, k0, m0, &full[s]);
#pragma unroll
          for (int b = 0; b < kBBoxes; ++b)
            ladder::tma_load_2d(stage + kATileBytes + b * kBBoxBytes, &map_b, n0 + 32 * b, k0, &full[s]);
          if (++s == STAGES) {
            s = 0;
            phase ^= 1;
          }
        }
      }
    }
  } else {
    // Step 3 (consumer warpgroups): many registers; per k step, B's fragments from shared memory into
    // registers (double-buffered: the previous step's wgmmas may still read theirs), then 4 wgmmas
    // m64n256k8 reading A's tile through its descriptor, then the previous step's stage released.
    ladder::setmaxnreg_inc<kConsumerRegs>();
    const int consumer = wg - 1;
    const Fragments f = fragment_offsets(consumer, warp, lane);
    int s = 0;
    uint32_t phase = 0;
    float d[TM / 2];
    uint32_t af[Overlap ? 2 : 1][4][4];
    // One k step into fragment buffer `buf` (a template argument: register arrays take constant
    // indices only). Returns the stage it used, released after the next step's wait.
    auto k_step = [&](auto buf_tag, bool first) {
      constexpr int buf = decltype(buf_tag)::value;
      ladder::mbarrier_wait(&full[s], phase);
      const float* const bs = reinterpret_cast<const float*>(smem + s * kStageBytes + kATileBytes);
#pragma unroll
      for (int kk = 0; kk < BK / 8; ++kk)
#pragma unroll
        for (int q = 0; q < 4; ++q) af[buf][kk][q] = __float_as_uint(bs[f.off[q] + kk * 8 * 32]);
      const uint64_t desc_a = ladder::wgmma_descriptor_k_major_sw128(smem + s * kStageBytes);
      ladder::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 8; ++kk)
        ladder::wgmma_m64n256k8_tf32_rs(d, af[buf][kk], ladder::wgmma_descriptor_advance(desc_a, kk * 32),
                                        kk > 0 || !first);  // scale_d = 0: a new tile starts from A·B
      ladder::wgmma_commit();
      if constexpr (!Overlap) ladder::wgmma_wait<0>();
      const int used = s;
      if (++s == STAGES) {
        s = 0;
        phase ^= 1;
      }
      return used;
    };
    auto release = [&](int stage) {
      __syncwarp();
      if (lane == 0) ladder::mbarrier_arrive(&empty[stage]);
    };
    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      const TileOrigin o = grouped_tile_origin(tile, tiles_m, tiles_n, band_rows, TM, TN);
      const int64_t m0 = o.row, n0 = o.col;
      int pending = -1;  // the stage of the k step whose wgmmas may still run
      if constexpr (Overlap) {
        for (int64_t kt = 0; kt < ktiles; kt += 2) {
          const int s0 = k_step(std::integral_constant<int, 0>{}, kt == 0);
          ladder::wgmma_wait<1>();
          if (pending >= 0) release(pending);
          pending = s0;
          if (kt + 1 < ktiles) {
            const int s1 = k_step(std::integral_constant<int, 1>{}, false);
            ladder::wgmma_wait<1>();
            release(pending);
            pending = s1;
          }
        }
        ladder::wgmma_wait<0>();
        release(pending);
      } else {
        for (int64_t kt = 0; kt < ktiles; ++kt) {
          release(k_step(std::integral_constant<int, 0>{}, kt == 0));  // k_step ends in wait_group 0
        }
      }

      // Step 4: the accumulators hold Cᵀ: row 16 w + g of the wgmma is n = n_lo, row 16 w + g + 8 is
      // n_lo + 4; column 8 j + 2 t (+ 1) is m. Predicated 4-byte stores.
      const int t4 = lane % 4;
      const int64_t col_lo = n0 + f.n_lo, col_hi = col_lo + 4;
#pragma unroll
      for (int j = 0; j < TM / 8; ++j) {
        const int64_t row = m0 + 8 * j + 2 * t4;
        if (row < m) {
          if (col_lo < n) C[row * n + col_lo] = d[4 * j];
          if (col_hi < n) C[row * n + col_hi] = d[4 * j + 2];
        }
        if (row + 1 < m) {
          if (col_lo < n) C[(row + 1) * n + col_lo] = d[4 * j + 1];
          if (col_hi < n) C[(row + 1) * n + col_hi] = d[4 * j + 3];
        }
      }
    }
  }
#endif
}

// ---- The host side ---------------------------------------------------------------------------------

// The workspace: A and/or B re-pitched to a multiple of 16 bytes where TMA cannot read them in place.
struct Workspace {
  int64_t kp, np, a_floats, b_floats;
};
Workspace workspace_of(const Gemm& g) {
  const int64_t kp = round_up(g.k, 4), np = round_up(g.n, 4);
  return {kp, np, g.k % 4 ? round_up(g.m * kp, 64) : 0, g.n % 4 ? round_up(g.k * np, 64) : 0};
}

size_t workspace_bytes(const Gemm& g) {
  const Workspace w = workspace_of(g);
  return static_cast<size_t>(w.a_floats + w.b_floats) * sizeof(float);
}

struct Candidate {
  const char* name;
  int stages;
  int band_rows;  // 0: square_band_rows (the default order); 1: row by row; else that many tile rows per band
  const void* kernel;
  void (*launch)(const CUtensorMap&, const CUtensorMap&, const Gemm&, unsigned, int64_t, int64_t, int64_t, size_t);
};

template <int STAGES, bool Overlap>
void launch_stages(const CUtensorMap& map_a, const CUtensorMap& map_b, const Gemm& g, unsigned blocks,
                   int64_t tiles_m, int64_t tiles_n, int64_t band_rows, size_t smem) {
  sgemm_tf32_wgmma_specialized<STAGES, Overlap>
      <<<blocks, THREADS, smem, g.stream>>>(map_a, map_b, g.C, g.m, g.n, g.k, tiles_m, tiles_n, band_rows);
  CUDA_CHECK_LAUNCH();
}

template <int STAGES, bool Overlap>
Candidate candidate(const char* name, int band_rows = 0) {
  return {name, STAGES, band_rows, reinterpret_cast<const void*>(sgemm_tf32_wgmma_specialized<STAGES, Overlap>),
          launch_stages<STAGES, Overlap>};
}

// Deepest first: the default is the deepest ring that fits the GPU's shared memory per block, its
// tiles in bands of square_band_rows tile rows. For comparison (never picked by the rule), the same
// kernel walking the tiles row by row (_rows) or in bands of 4 or 16 tile rows (_g4, _g16).
const Candidate kCandidates[] = {candidate<4, false>("256x128x32_s4"), candidate<3, false>("256x128x32_s3"),
                                 candidate<2, false>("256x128x32_s2"), candidate<4, false>("256x128x32_s4_rows", 1),
                                 candidate<4, false>("256x128x32_s4_g4", 4), candidate<4, false>("256x128x32_s4_g16", 16)};
constexpr const char* kId = "sgemm/tf32_04_wgmma_specialized";

size_t smem_of(const Candidate& c) { return size_t(c.stages) * kStageBytes + 1024; }

struct Pick {
  const Candidate* c;
  unsigned blocks;    // persistent blocks: at most the tiles, at most blocks/SM x SMs
  int64_t tiles_m, tiles_n;
  int64_t band_rows;  // tile rows per band of the tile order
  std::string why;
};

Pick pick(const Gemm& g) {
  const TileGrid grid = tile_grid(g.m, g.n, TM, TN);
  const int64_t tiles_m = grid.blocks / grid.tiles_n;
  for (const Candidate& c : kCandidates) {
    if (!g.tile.empty() && g.tile != c.name) continue;
    if (c.band_rows && g.tile.empty()) continue;  // the order variants run only when asked for
    if (smem_of(c) > g.dev->smem_per_block_optin) continue;
    const int per_sm = ladder::blocks_per_sm(*g.dev, c.kernel, THREADS, smem_of(c));
    if (per_sm == 0) continue;
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(grid.blocks, int64_t(g.dev->sm_count) * per_sm));
    const int64_t band = c.band_rows ? std::min<int64_t>(c.band_rows, tiles_m) : square_band_rows(blocks, tiles_m, TM, TN);
    return {&c, blocks, tiles_m, grid.tiles_n, band,
            std::string(c.name) + (g.tile.empty() ? ": the deepest ring that fits " : " (--tile); fits ") +
                std::to_string(g.dev->smem_per_block_optin / 1024) + " KB per block; persistent, " +
                std::to_string(per_sm) + " block(s) per SM x " + std::to_string(g.dev->sm_count) + " SMs; bands of " +
                std::to_string(band) + " tile rows"};
  }
  if (!g.tile.empty()) {  // a known name (an unknown one exits 2 here) whose ring does not fit
    const Candidate& c = pick_candidate(kId, g.tile, kCandidates, kCandidates[0].name);
    ladder::refuse_shared_memory(std::string(kId) + " --tile " + g.tile, smem_of(c), *g.dev);
  }
  ladder::refuse_shared_memory(std::string(kId) + " (its smallest ring, " + kCandidates[2].name + ")",
                               smem_of(kCandidates[2]), *g.dev);
}

void launch(const Gemm& g) {
  if (!g.tile.empty()) pick_candidate(kId, g.tile, kCandidates, kCandidates[0].name);  // unknown: exit 2
  const Pick p = pick(g);
  const Workspace w = workspace_of(g);
  float* const ap = w.a_floats ? static_cast<float*>(g.workspace) : nullptr;
  float* const bp = w.b_floats ? static_cast<float*>(g.workspace) + w.a_floats : nullptr;
  // Step 1: only where a row pitch is not a multiple of 16 bytes: that operand re-pitched.
  if (ap) {
    pad_rows<<<ladder::resident_blocks(*g.dev, 256), 256, 0, g.stream>>>(g.A, ap, g.m, g.k, w.kp);
    CUDA_CHECK_LAUNCH();
  }
  if (bp) {
    pad_rows<<<ladder::resident_blocks(*g.dev, 256), 256, 0, g.stream>>>(g.B, bp, g.k, g.n, w.np);
    CUDA_CHECK_LAUNCH();
  }
  // Step 2: A seen as 256 x 32 boxes (K-major, wgmma's shared operand), B as 32 x 32 boxes (N-major,
  // read into registers); both 128-byte swizzled.
  const CUtensorMap map_a = ladder::make_tensor_map_2d(ap ? ap : g.A, g.m, g.k, ap ? w.kp : g.k, TM, BK,
                                                       CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap map_b = ladder::make_tensor_map_2d(bp ? bp : g.B, g.k, g.n, bp ? w.np : g.n, BK, 32,
                                                       CU_TENSOR_MAP_SWIZZLE_128B);
  const size_t smem = smem_of(*p.c);
  ladder::require_shared_memory(p.c->kernel, smem, *g.dev, std::string(kId) + " " + p.c->name);
  p.c->launch(map_a, map_b, g, p.blocks, p.tiles_m, p.tiles_n, p.band_rows, smem);
}

std::string describe(const Gemm& g) { return pick(g).why; }

void require_size(const Gemm& g) { tf32_wgmma_tma::require_tma_sides(kId, g); }

const Step kStep{kId, launch, nullptr, /*tunable=*/true, workspace_bytes, describe, Math::tf32, require_size};
LADDER_STEP(kStep);

}  // namespace sgemm::tf32_wgmma_specialized
