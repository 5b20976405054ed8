// sgemm tf32 step 03: Hopper — TMA tile loads, an mbarrier pipeline and wgmma from shared memory.
// Step 02 feeds the tensor cores warp by warp: every fragment goes shared -> registers (ldmatrix,
// LDS) and every copy is a cp.async per thread. On sm_90 both move to dedicated hardware:
//   * TMA: one thread asks the copy engine for a whole 128 x 32 box of A and of B per stage
//     (cp.async.bulk.tensor, common/tma.cuh); the engine computes the addresses, zero-fills what lies
//     outside the matrix (no predicates anywhere: edges in m, n and k come for free) and writes the
//     box 128-byte swizzled, the layout wgmma reads without bank conflicts;
//   * mbarrier: a `full` barrier per stage completes when the engine has written the stage's bytes
//     (expect_tx), an `empty` one when all 256 threads are done reading it; thread 0 refills a stage
//     only after its `empty` phase, S stages deep (common/mbarrier.cuh);
//   * wgmma: each of the block's 2 warpgroups multiplies its 64 x 32 slice of A by the 32 x 128 tile
//     of B with 4 instructions m64n128k8, reading both straight from shared memory through
//     descriptors; the accumulators (64 x 128 fp32: 64 registers a thread) stay in registers. The
//     instructions are asynchronous: the next stage's wgmmas are issued before the previous ones are
//     waited for (wait_group 1), so the tensor cores never wait for the warps.
// The layout trap: wgmma reads TF32 only K-major (K contiguous) for both operands; fp16/bf16 may be
// transposed, TF32 may not. A (m x k, row-major) is K-major; B (k x n, row-major) is N-major. This
// step transposes B first, into a workspace Bᵀ (n x k', k' = k rounded up to 4 so rows are 16-byte
// aligned, as TMA needs), with a tiled transpose kernel inside the timed region (~2 x 4 x k x n
// bytes of extra traffic: 60 us of the 564 us Nsight Compute gives the whole step at 4096^3, H100,
// 2026-11-27). A is used in place when k % 4 == 0, else copied to a 16-byte-pitched workspace too.
// Step 04 removes the transpose.
// Changes from step 02: TMA + mbarrier instead of cp.async + __syncthreads, wgmma from shared memory
// instead of ldmatrix/LDS + mma.sync (no fragments in registers: 64 accumulators instead of 128 +
// 64), 128 x 128 block tiles in 2 warpgroups, the B transpose. Inputs are read as TF32 by the
// hardware (cut, not rounded: the TF32 bound allows for it).
// Costs: S x 32 KB of shared memory; the transpose; thread 0 both issues copies and computes, so its
// warpgroup waits while it waits for a free stage (step 04 gives the copies their own warps).
// Tunable: --tile 128x128x32_sS, S stages (3, 4 or 6); the default is the one with the most stages
// in flight per SM (blocks per SM x S, the occupancy calculator), ties to more blocks.
// Needs sm_90a (wgmma; its add_step line says NEEDS sm_90a): built with
// -gencode=arch=compute_90a,code=sm_90a for this target; on any other GPU the step exits 2 naming it.
// Sizes: m, n and k up to 2^31 - 256 (TMA's coordinates are 32-bit); past that, exit 2.
// Source: PTX ISA 8.x, "cp.async.bulk.tensor", "mbarrier", "wgmma.mma_async" and its matrix
// descriptors; CUDA C++ Programming Guide, "Tensor Memory Access"; CUDA Driver API
// cuTensorMapEncodeTiled. Run: build/bin/sgemm_tf32_03_wgmma_tma --m 4096
#include "sgemm/sgemm.cuh"

#include "common/mbarrier.cuh"
#include "common/tma.cuh"
#include "common/wgmma.cuh"

#include <iterator>
#include <string>
#include <utility>

namespace sgemm::tf32_wgmma_tma {

constexpr int BM = 128, BN = 128, BK = 32;  // BK: one 128-byte row of the swizzle per tile row
constexpr int kWarpgroups = BM / 64, THREADS = 128 * kWarpgroups;
constexpr uint32_t kATileBytes = BM * BK * 4, kBTileBytes = BN * BK * 4, kStageBytes = kATileBytes + kBTileBytes;
static_assert(BK * 4 == 128, "a tile row is exactly one 128-byte swizzle row");
static_assert(kATileBytes % 1024 == 0 && (64 * BK * 4) % 1024 == 0, "tiles and warpgroup slices 1024-byte aligned");

// Bᵀ: bt[j * ldt + p] = b[p * n + j] for p < k, j < n; 32 x 32 tiles through shared memory (one
// column padded: the transposed reads hit 32 banks), both global sides coalesced.
__global__ void __launch_bounds__(256)
    transpose_to_k_major(const float* __restrict__ b, float* __restrict__ bt, int64_t k, int64_t n, int64_t ldt,
                         int64_t tiles_n) {
  __shared__ float tile[32][33];
  const int64_t p0 = static_cast<int64_t>(blockIdx.x) / tiles_n * 32, j0 = static_cast<int64_t>(blockIdx.x) % tiles_n * 32;
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
#pragma unroll
  for (int r = ty; r < 32; r += 8) {
    const int64_t p = p0 + r, j = j0 + tx;
    tile[r][tx] = p < k && j < n ? b[p * n + j] : 0.0f;
  }
  __syncthreads();
#pragma unroll
  for (int r = ty; r < 32; r += 8) {
    const int64_t j = j0 + r, p = p0 + tx;
    if (j < n && p < k) bt[j * ldt + p] = tile[tx][r];
  }
}

// A with a 16-byte row pitch: ap[i * ldp + p] = a[i * k + p] (only when k % 4 != 0).
__global__ void pad_rows(const float* __restrict__ a, float* __restrict__ ap, int64_t m, int64_t k, int64_t ldp) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < m * k; e += int64_t(gridDim.x) * blockDim.x)
    ap[e / k * ldp + e % k] = a[e];
}

template <int STAGES>
__global__ void __launch_bounds__(THREADS)
    sgemm_tf32_wgmma_tma(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_bt,
                         float* __restrict__ C, int64_t m, int64_t n, int64_t k, int64_t tiles_n) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __trap();  // wgmma needs sm_90a; the launcher exits 2 before launching anywhere else
#else
  extern __shared__ uint8_t smem_raw[];
  __shared__ uint64_t full[STAGES], empty[STAGES];
  // The swizzle pattern repeats every 1024 bytes and wgmma applies it to absolute addresses: the
  // tiles start on a 1024-byte boundary (the launch asks for 1 KB of slack).
  uint8_t* const smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  const TileOrigin t = tile_origin(tiles_n, BM, BN);
  const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32 % 4, lane = tid % 32;
  const int64_t ktiles = (k + BK - 1) / BK;
  auto a_tile = [&](int s) { return smem + s * kStageBytes; };
  auto b_tile = [&](int s) { return smem + s * kStageBytes + kATileBytes; };
  // One stage: both boxes on the stage's full barrier, which expects their bytes (zero-filled ones
  // outside the matrices count too).
  auto request = [&](int64_t kt) {
    const int s = static_cast<int>(kt % STAGES);
    ladder::mbarrier_arrive_expect_tx(&full[s], kStageBytes);
    ladder::tma_load_2d(a_tile(s), &map_a, static_cast<int32_t>(kt * BK), static_cast<int32_t>(t.row), &full[s]);
    ladder::tma_load_2d(b_tile(s), &map_bt, static_cast<int32_t>(kt * BK), static_cast<int32_t>(t.col), &full[s]);
  };

  // Step 1: the barriers (full: thread 0's arrival + the bytes; empty: every thread), then the first
  // S stages requested.
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ladder::mbarrier_init(&full[s], 1);
      ladder::mbarrier_init(&empty[s], THREADS);
    }
    ladder::mbarrier_init_fence();
  }
  __syncthreads();
  if (tid == 0)
    for (int64_t kt = 0; kt < ktiles && kt < STAGES; ++kt) request(kt);

  // Step 2: per k step, wait for the stage's bytes, issue 4 wgmmas on it (k8 slices: the descriptors
  // 32 bytes further each), then wait for the previous step's wgmmas — which frees their stage: every
  // thread arrives on its empty barrier, and thread 0 refills it with the tile S steps later.
  constexpr int kAccum = BN / 2;  // m64n128 fp32 accumulators a thread
  float d[kAccum];
#pragma unroll
  for (int i = 0; i < kAccum; ++i) d[i] = 0.0f;
  for (int64_t kt = 0; kt < ktiles; ++kt) {
    const int s = static_cast<int>(kt % STAGES);
    ladder::mbarrier_wait(&full[s], static_cast<uint32_t>(kt / STAGES) & 1);
    __syncwarp();
    const uint64_t desc_a = ladder::wgmma_descriptor_k_major_sw128(a_tile(s) + wg * 64 * BK * 4);
    const uint64_t desc_b = ladder::wgmma_descriptor_k_major_sw128(b_tile(s));
    ladder::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / 8; ++kk)
      ladder::wgmma_m64n128k8_tf32(d, ladder::wgmma_descriptor_advance(desc_a, kk * 32),
                                   ladder::wgmma_descriptor_advance(desc_b, kk * 32), 1);
    ladder::wgmma_commit();
    ladder::wgmma_wait<1>();
    if (kt > 0) {
      const int64_t done = kt - 1;
      const int ps = static_cast<int>(done % STAGES);
      ladder::mbarrier_arrive(&empty[ps]);
      if (tid == 0 && done + STAGES < ktiles) {
        ladder::mbarrier_wait(&empty[ps], static_cast<uint32_t>(done / STAGES) & 1);
        request(done + STAGES);
      }
    }
  }
  ladder::wgmma_wait<0>();

  // Step 3: the accumulators to C (warp w of warpgroup wg: rows 64 wg + 16 w + g and + 8; columns
  // 8 j + 2 t, + 1), two floats per store where n is even, single ones at the edges.
  const int g = lane / 4, tq = lane % 4;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t row = t.row + wg * 64 + warp * 16 + g + h * 8;
      const int64_t col = t.col + j * 8 + 2 * tq;
      if (row >= m) continue;
      const float x = d[4 * j + 2 * h], y = d[4 * j + 2 * h + 1];
      float* c = C + row * n + col;
      if ((n & 1) == 0 && col + 1 < n) {
        *reinterpret_cast<float2*>(c) = make_float2(x, y);
      } else {
        if (col < n) c[0] = x;
        if (col + 1 < n) c[1] = y;
      }
    }
#endif
}

// ---- The host side ---------------------------------------------------------------------------------

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// The workspace: Bᵀ (n x k'), then A with a 16-byte pitch when k % 4 != 0; each part 256-byte aligned.
struct Workspace {
  int64_t kp, bt_floats, ap_floats;
};
Workspace workspace_of(const Gemm& g) {
  const int64_t kp = round_up(g.k, 4);
  return {kp, round_up(g.n * kp, 64), g.k % 4 ? round_up(g.m * kp, 64) : 0};
}

size_t workspace_bytes(const Gemm& g) {
  const Workspace w = workspace_of(g);
  return static_cast<size_t>(w.bt_floats + w.ap_floats) * sizeof(float);
}

// TMA addresses a box by signed 32-bit coordinates (cp.async.bulk.tensor's .s32 operands): a matrix
// side past 2^31 - 256 would wrap the coordinate of its last box (which starts below the side and may
// reach 256 past it) and read zeros instead of the matrix. Such a size exits 2 naming the limit.
constexpr int64_t kMaxTmaSide = (int64_t(1) << 31) - 256;
void require_tma_sides(const char* step_id, const Gemm& g) {
  for (const auto& [flag, side] : {std::pair<const char*, int64_t>{"m", g.m}, {"n", g.n}, {"k", g.k}})
    if (side > kMaxTmaSide)
      throw ladder::UsageError(std::string(step_id) + " addresses its tiles by TMA's 32-bit coordinates: --" + flag +
                               " " + std::to_string(side) + " is past its limit " + std::to_string(kMaxTmaSide) +
                               " (2^31 - 256)");
}

struct Candidate {
  const char* name;
  int stages;
  const void* kernel;
  void (*launch)(const CUtensorMap&, const CUtensorMap&, const Gemm&, unsigned, int64_t, size_t);
};

template <int STAGES>
void launch_stages(const CUtensorMap& map_a, const CUtensorMap& map_bt, const Gemm& g, unsigned blocks,
                   int64_t tiles_n, size_t smem) {
  sgemm_tf32_wgmma_tma<STAGES><<<blocks, THREADS, smem, g.stream>>>(map_a, map_bt, g.C, g.m, g.n, g.k, tiles_n);
  CUDA_CHECK_LAUNCH();
}

template <int STAGES>
Candidate candidate(const char* name) {
  return {name, STAGES, reinterpret_cast<const void*>(sgemm_tf32_wgmma_tma<STAGES>), launch_stages<STAGES>};
}

const Candidate kCandidates[] = {candidate<3>("128x128x32_s3"), candidate<4>("128x128x32_s4"),
                                 candidate<6>("128x128x32_s6")};
constexpr const char* kId = "sgemm/tf32_03_wgmma_tma";

size_t smem_of(const Candidate& c) { return size_t(c.stages) * kStageBytes + 1024; }  // + alignment slack

struct Pick {
  const Candidate* c;
  std::string why;
};

Pick default_pick(const Gemm& g) {
  const Candidate* best = nullptr;
  int best_blocks = 0;
  for (const Candidate& c : kCandidates) {
    const size_t smem = smem_of(c);
    if (smem > g.dev->smem_per_block_optin) continue;
    const int blocks = ladder::blocks_per_sm(*g.dev, c.kernel, THREADS, smem);
    if (blocks == 0) continue;
    if (!best || blocks * c.stages > best_blocks * best->stages ||
        (blocks * c.stages == best_blocks * best->stages && blocks > best_blocks)) {
      best = &c;
      best_blocks = blocks;
    }
  }
  if (!best) {
    const Candidate* smallest = &kCandidates[0];
    for (const Candidate& c : kCandidates) smallest = smem_of(c) < smem_of(*smallest) ? &c : smallest;
    ladder::refuse_shared_memory(std::string(kId) + " (its smallest ring, " + smallest->name + ")", smem_of(*smallest),
                                 *g.dev);
  }
  return {best, std::string(best->name) + ": " + std::to_string(best_blocks) + " block(s) per SM x " +
                    std::to_string(best->stages) + " stages, the most stages in flight per SM that fit " +
                    std::to_string(g.dev->smem_per_sm / 1024) + " KB"};
}

Pick pick(const Gemm& g) {
  if (g.tile.empty()) return default_pick(g);
  return {&pick_candidate(kId, g.tile, kCandidates, kCandidates[0].name), g.tile + " (--tile)"};
}

void launch(const Gemm& g) {
  if (!g.tile.empty()) pick_candidate(kId, g.tile, kCandidates, kCandidates[0].name);  // unknown: exit 2
  const Candidate& c = *pick(g).c;
  const Workspace w = workspace_of(g);
  float* const bt = static_cast<float*>(g.workspace);
  float* const ap = w.ap_floats ? bt + w.bt_floats : nullptr;
  // Step 1: Bᵀ (and A re-pitched) into the workspace, on the same stream: inside the timed region.
  const int64_t tiles_k32 = (g.k + 31) / 32, tiles_n32 = (g.n + 31) / 32;
  transpose_to_k_major<<<static_cast<unsigned>(tiles_k32 * tiles_n32), 256, 0, g.stream>>>(g.B, bt, g.k, g.n, w.kp,
                                                                                          tiles_n32);
  CUDA_CHECK_LAUNCH();
  if (ap) {
    pad_rows<<<ladder::resident_blocks(*g.dev, 256), 256, 0, g.stream>>>(g.A, ap, g.m, g.k, w.kp);
    CUDA_CHECK_LAUNCH();
  }
  // Step 2: the tensor maps (host-side descriptors, microseconds) and the GEMM.
  const CUtensorMap map_a = ladder::make_tensor_map_2d(ap ? ap : g.A, g.m, g.k, ap ? w.kp : g.k, BM, BK,
                                                       CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap map_bt = ladder::make_tensor_map_2d(bt, g.n, g.k, w.kp, BN, BK, CU_TENSOR_MAP_SWIZZLE_128B);
  const size_t smem = smem_of(c);
  ladder::require_shared_memory(c.kernel, smem, *g.dev, std::string(kId) + " " + c.name);
  const TileGrid grid = tile_grid(g.m, g.n, BM, BN);
  c.launch(map_a, map_bt, g, grid.blocks, grid.tiles_n, smem);
}

std::string describe(const Gemm& g) { return pick(g).why; }

void require_size(const Gemm& g) { require_tma_sides(kId, g); }

const Step kStep{kId, launch, nullptr, /*tunable=*/true, workspace_bytes, describe, Math::tf32, require_size};
LADDER_STEP(kStep);

}  // namespace sgemm::tf32_wgmma_tma
