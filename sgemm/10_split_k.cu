// sgemm step 10: split-K — slices of k run side by side when C has too few tiles to fill the GPU.
// Step 09 gives each block one tile of C and the whole of k. A C of 1024 x 1024 has 64 tiles of
// 128 x 128: with k = 8192 each block runs 512 k steps while 68 of an H100's 132 SMs have nothing to
// do — less than half a wave, and no tiling fixes that without shrinking the tiles (and their
// reuse). Here the k range is cut into S slices as well: block (tile, s) runs step 09's pipelined
// tile loop, unchanged, on k in [s kc, (s + 1) kc) and writes its partial tile to slice s of a
// workspace; a second kernel adds the S partials of each element in slice order and writes C.
// S fills the GPU's block slots (SMs x blocks per SM, from the occupancy calculator, profile-aware)
// with tiles x S blocks, as long as every slice keeps at least kMinSlice of k; kc is a whole number
// of BK steps. The tiling that splits: the largest block tile that fits this GPU, with the most k in
// flight (on the H100 128x256x32_8x16_w64x64_s3; where its 145.5 KB do not fit a block, e.g. 99 KB
// on an RTX 3060, the 128x256x16 one). Shapes with a wave or more of tiles (S = 1) run step 09's
// kernel with 09's default. Needs cp.async (sm_80 or newer; exit 2 on older GPUs).
// Deterministic: no float atomics. Every element of C is the same additions in the same order on
// every run (and any order of an fp32 dot product is within the check's bound: sgemm.cuh).
// Changes from step 09: a kernel that runs pipelined_tile on one slice of k (blockIdx.y), the
// slice-summing kernel, the choice of S, a workspace (Step::workspace_bytes: the harness allocates
// it). Costs: S x m x n x 4 bytes of workspace, written once and read once (at 1024 x 1024, S = 4:
// 16 MiB, L2-sized), a second launch, and a partial sum per slice instead of one accumulator.
// Source: beyond the posts (CUTLASS's "parallel" split-K GEMM: partial products, then a reduction
// kernel). Run: build/bin/sgemm_10_split_k --m 1024 --n 1024 --k 8192 [--tile NAME]
#include "09_pipelined.cu"  // pipelined_tile, step 09's defaults, unchanged

#include <algorithm>
#include <string>

namespace sgemm::split_k {

using pipelined::pipelined_tile;
using warptiling::WarpTile;

constexpr int64_t kMinSlice = 256;  // k per slice at least: 128 x 128 x 256 multiply-adds per block
constexpr int kSumThreads = 256;

// Block (x, y): tile x of C, slice y of k — k in [y k_slice, min((y + 1) k_slice, k)) — into slice y
// of `out` (m x n, pitch n; slices slice_stride floats apart). One slice: out is C.
template <class T, int Stages, int MinBlocks, bool VecB>
__global__ void __launch_bounds__(T::THREADS, MinBlocks)
    sgemm_split_k(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ out,
                  int64_t m, int64_t n, int64_t k, int64_t k_slice, int64_t slice_stride, int64_t tiles_n) {
  const int64_t k0 = static_cast<int64_t>(blockIdx.y) * k_slice;
  const int64_t kc = k - k0 < k_slice ? k - k0 : k_slice;
  // A's rows keep their pitch k; B's slice starts k0 rows down.
  pipelined_tile<T, Stages, VecB>(A + k0, k, B + k0 * n, out + blockIdx.y * slice_stride, m, n, kc, tiles_n);
}

// C[i] = partial_0[i] + partial_1[i] + ... in slice order, 4 elements per float4 (the slices and C
// are 16-byte aligned: slice_stride is a multiple of 4), the last count % 4 one by one.
__global__ void sum_slices(const float* __restrict__ partials, float* __restrict__ C, int64_t count,
                           int slices, int64_t slice_stride) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  for (int64_t q = first; q < count / 4; q += stride) {
    float4 acc = reinterpret_cast<const float4*>(partials)[q];
    for (int s = 1; s < slices; ++s) {
      const float4 v = reinterpret_cast<const float4*>(partials + s * slice_stride)[q];
      acc.x += v.x, acc.y += v.y, acc.z += v.z, acc.w += v.w;
    }
    reinterpret_cast<float4*>(C)[q] = acc;
  }
  for (int64_t i = count / 4 * 4 + first; i < count; i += stride) {
    float acc = partials[i];
    for (int s = 1; s < slices; ++s) acc += partials[s * slice_stride + i];
    C[i] = acc;
  }
}

// How a problem is cut: `slices` slices of `k_slice` (the last one shorter).
struct Split {
  int64_t slices, k_slice;
};

// Floats from one slice of the workspace to the next: m n rounded up to 256 bytes.
int64_t slice_stride(int64_t m, int64_t n) { return (m * n + 63) / 64 * 64; }

// One of step 09's tilings, run on slices of k.
template <class T, int Stages, int MinBlocks>
struct Sliced {
  static constexpr int kSmem = pipelined::ring_bytes<T, Stages>();
  // Its two kernels, B copied in 16-byte or 4-byte pieces.
  static const void* vec_b() { return reinterpret_cast<const void*>(sgemm_split_k<T, Stages, MinBlocks, true>); }
  static const void* scalar_b() { return reinterpret_cast<const void*>(sgemm_split_k<T, Stages, MinBlocks, false>); }

  static void configure(const ladder::DeviceInfo& dev) {
    pipelined::configure_tiling(dev, vec_b(), scalar_b(), kSmem, "the split-k tile");
  }
  // Blocks of this tiling one SM of this GPU holds (step 09's tiling_blocks_per_sm); 0 when its
  // shared memory is more than one block may have here. Once per process.
  static int blocks_per_sm(const ladder::DeviceInfo& dev) {
    static const int blocks = pipelined::tiling_blocks_per_sm(dev, vec_b(), scalar_b(), T::THREADS, kSmem);
    return blocks;
  }

  static void run(const Gemm& g, Split s) {
    configure(*g.dev);
    const TileGrid grid = tile_grid(g.m, g.n, T::BM, T::BN);
    const int64_t stride = slice_stride(g.m, g.n);
    float* const out = s.slices == 1 ? g.C : static_cast<float*>(g.workspace);
    auto kernel = g.n % 4 == 0 ? sgemm_split_k<T, Stages, MinBlocks, true>  // 256-byte aligned bases
                               : sgemm_split_k<T, Stages, MinBlocks, false>;
    const dim3 blocks(grid.blocks, static_cast<unsigned>(s.slices));
    kernel<<<blocks, T::THREADS, kSmem, g.stream>>>(g.A, g.B, out, g.m, g.n, g.k, s.k_slice, stride, grid.tiles_n);
    CUDA_CHECK_LAUNCH();
    if (s.slices == 1) return;
    sum_slices<<<ladder::resident_blocks(*g.dev, kSumThreads), kSumThreads, 0, g.stream>>>(
        out, g.C, g.m * g.n, static_cast<int>(s.slices), stride);
    CUDA_CHECK_LAUNCH();
  }
};

struct Candidate {
  const char* name;
  int bm, bn, bk, stages, smem;
  int (*blocks_per_sm)(const ladder::DeviceInfo& dev);
  void (*run)(const Gemm& g, Split s);
};

template <class T, int Stages, int MinBlocks>
constexpr Candidate sliced(const char* name) {
  using S = Sliced<T, Stages, MinBlocks>;
  return {name, T::BM, T::BN, T::BK, Stages, S::kSmem, S::blocks_per_sm, S::run};
}

// Step 09's tilings (the same names and template arguments), each with the split below.
const Candidate kCandidates[] = {
    sliced<WarpTile<128, 128, 8, 64, 32, 8, 8>, 3, 2>("128x128x8_8x8_w64x32_s3"),
    sliced<WarpTile<128, 128, 16, 64, 32, 8, 8>, 2, 2>("128x128x16_8x8_w64x32_s2"),
    sliced<WarpTile<128, 128, 16, 64, 32, 8, 8>, 3, 1>("128x128x16_8x8_w64x32_s3"),
    sliced<WarpTile<128, 128, 8, 64, 64, 16, 8>, 3, 2>("128x128x8_16x8_w64x64_s3"),
    sliced<WarpTile<128, 256, 16, 64, 64, 8, 16>, 2, 1>("128x256x16_8x16_w64x64_s2"),
    sliced<WarpTile<128, 256, 32, 64, 64, 8, 16>, 3, 1>("128x256x32_8x16_w64x64_s3"),
};
constexpr const char* kId = "sgemm/10_split_k";

// The tiling that splits when no --tile is given: of those that fit this GPU, the largest block
// tile (the most reuse per loaded value: a slice is a short GEMM of its own), and of those the one
// with the most k in flight (BK x stages). Throws UsageError (exit 2) if none fits.
const Candidate& default_split_tiling(const ladder::DeviceInfo& dev) {
  const Candidate* best = nullptr;
  for (const Candidate& c : kCandidates) {
    if (c.blocks_per_sm(dev) == 0) continue;
    const int area = c.bm * c.bn, best_area = best ? best->bm * best->bn : 0;
    if (!best || area > best_area || (area == best_area && c.bk * c.stages > best->bk * best->stages)) best = &c;
  }
  if (!best) {
    const Candidate* smallest = &kCandidates[0];
    for (const Candidate& c : kCandidates) smallest = c.smem < smallest->smem ? &c : smallest;
    ladder::refuse_shared_memory(std::string(kId) + " (its smallest tiling, " + smallest->name + ")", smallest->smem, dev);
  }
  return *best;
}

// S: enough slices for tiles x S blocks to fill the block slots without passing them, each slice
// at least kMinSlice of k; then kc rounded up to whole BK steps (so S may shrink).
Split split_for(const Gemm& g, const Candidate& c) {
  const int64_t slots = int64_t(g.dev->sm_count) * std::max(c.blocks_per_sm(*g.dev), 1);
  const int64_t tiles_m = (g.m + c.bm - 1) / c.bm, tiles_n = (g.n + c.bn - 1) / c.bn;
  if (tiles_m >= slots || tiles_n >= slots || tiles_m * tiles_n >= slots) return {1, g.k};  // a wave
  int64_t slices = std::min(slots / (tiles_m * tiles_n), g.k / kMinSlice);
  if (slices <= 1) return {1, g.k};
  const int64_t k_slice = ((g.k + slices - 1) / slices + c.bk - 1) / c.bk * c.bk;
  return {(g.k + k_slice - 1) / k_slice, k_slice};
}

// What runs: the named tiling with its split; with no --tile, the default split tiling where it
// splits, and otherwise step 09 with its default for this GPU and size (null here).
struct Plan {
  const Candidate* tiling;
  Split split;
};
Plan plan(const Gemm& g) {
  const Candidate& c = g.tile.empty() ? default_split_tiling(*g.dev) : pick_candidate(kId, g.tile, kCandidates, "");
  const Split s = split_for(g, c);
  if (g.tile.empty() && s.slices == 1) return {nullptr, s};
  return {&c, s};
}

size_t workspace_bytes(const Gemm& g) {
  const Split s = plan(g).split;
  return s.slices == 1 ? 0 : static_cast<size_t>(s.slices * slice_stride(g.m, g.n)) * sizeof(float);
}

void launch(const Gemm& g) {
  const Plan p = plan(g);
  if (!p.tiling) {
    pipelined::launch(g);
    return;
  }
  p.tiling->run(g, p.split);
}

std::string describe(const Gemm& g) {
  const Plan p = plan(g);
  if (!p.tiling) return "no split: step 09's " + pipelined::describe(g);
  const int per_sm = p.tiling->blocks_per_sm(*g.dev);
  std::string d = std::string(p.tiling->name) +
                  (g.tile.empty() ? " (the largest block tile that fits, the most k in flight)" : " (--tile)");
  const int64_t tiles = ((g.m + p.tiling->bm - 1) / p.tiling->bm) * ((g.n + p.tiling->bn - 1) / p.tiling->bn);
  d += ": " + std::to_string(tiles) + " tiles for " + std::to_string(int64_t(g.dev->sm_count) * per_sm) + " slots (" +
       std::to_string(g.dev->sm_count) + " SMs x " + std::to_string(per_sm) + " block(s) per SM)";
  if (p.split.slices == 1) return d + ", no split";
  return d + ", k in " + std::to_string(p.split.slices) + " slices of " + std::to_string(p.split.k_slice);
}

const Step kStep{kId, launch, nullptr, /*tunable=*/true, workspace_bytes, describe};
LADDER_STEP(kStep);

}  // namespace sgemm::split_k
