// sgemm tf32 step 05: shape classes — the tensor cores on step 04's tiles where C has enough of
// them, on slices of k where it has few, and the bandwidth-bound kernels of fp32 step 11 for
// GEMV-like shapes.
// Step 04 is one design: 256 x 128 tiles of C, one block per SM, each tile a long run of wgmmas. At
// 4096^3 that is cuBLAS TF32's speed. At a GEMV-like shape it cannot be: with m <= 16, C has one
// tile row, 1/16 to 1/256 of each tile is real, and the problem is bound by reading B once (2 FLOPs
// per 4 bytes at m = 1), which any kernel that streams B at full bandwidth reaches; the tensor
// cores have nothing to speed up. The same holds for n <= 16 (A read once). A small C with a long k
// (64 x 64 x 65536: one tile for 132 SMs) is different: the tensor cores help there, but only if
// the whole GPU shares the few tiles. So this step takes fp32 step 11's class rule and sends each
// class where its bound says:
//   m <= 16 or n <= 16        step 11's skinny kernels (gemm_stream_b, gemm_dot_rows): the streamed
//                             matrix read once at full bandwidth, k cut into slices when there are
//                             too few columns (or rows) to fill the GPU; fp32 FMAs, exact fp32
//                             products, well inside the TF32 bound;
//   few tiles, long k         (step 11's two split classes: a small C, or C in fewer tiles than
//                             the GPU has SMs) a TF32 split-K where step 04's tiles leave most SMs
//                             idle: tf32_02's mma.sync tile loop, unchanged, on 64 x 64 tiles, each
//                             block on one slice of k into its own slice of a workspace, and step
//                             11's slice sum (a fixed order: the same bits every run). Step 11's
//                             fp32 split-K ran here first: at 64 x 64 x 65536 its FMAs, not the
//                             bytes, were the limit (37% of the FP32 peak, 61% of cuBLAS TF32); on
//                             the tensor cores the slices are bound by reading A and B. "Most SMs
//                             idle" is step 11's small C (its tiles less than half used), or t of
//                             step 04's tiles with t x R < S (R = spec TF32 / spec FP32, 8 on an
//                             H100; S SMs): fewer than 17 tiles of 256 x 128 on an H100. With more
//                             tiles, step 04;
//   everything else           step 04: its tiles, its TF32 truncation.
// Changes from step 04: the class rule in front of it; the skinny classes run fp32 kernels, the
// few-tiles classes a TF32 split-K. Steps 02, 04 and 11 are included unchanged.
// Costs: a workspace of slices x m x n floats where k is sliced (4 MiB at 64 x 64 x 65536: it stays
// in L2 between the two kernels); a second launch there; one more decision per call. The choice line
// names the class and the kernel.
// Needs sm_90a, as step 04 (its add_step line says NEEDS sm_90a); elsewhere the step exits 2.
// Sizes: the step 04 route keeps step 04's limit (m, n, k up to 2^31 - 256, TMA's 32-bit
// coordinates); the fp32 routes index in 64 bits; the split-K counts k steps in int (k < 2^36,
// past any size the memory guard lets through at these m and n).
// Source: beyond the posts; cuBLAS picks GEMV, split-K and tensor-core kernels by shape the same way.
// Run: build/bin/sgemm_tf32_05_shape_classes --m 1 --n 8192 --k 8192 (or --m 8192 --n 1, --m 8,
// --m 64 --n 64 --k 65536, --m 4096)
#include "11_shape_classes.cu"             // the class rule, the fp32 kernels and the slice sum, unchanged
#include "tf32_02_mma_sync.cu"             // the mma.sync tile loop over a range of k, unchanged
#include "tf32_04_wgmma_specialized.cu"    // the tensor-core kernel, unchanged

#include <string>

namespace sgemm::tf32_shape_classes {

constexpr const char* kId = "sgemm/tf32_05_shape_classes";

// True where step 04's tiles (one SM each) would do fewer FLOPs per clock on the tensor cores than
// FMAs on every SM: tiles x (spec TF32 / spec FP32) < SMs. The rule was made for step 11's fp32
// split-K; the TF32 split-K that runs these shapes now is at least as fast, so the bound holds for
// it too (where between 17 and 132 tiles it would still win is not measured).
bool too_few_tiles_for_the_tensor_cores(const Gemm& g) {
  const ladder::DeviceInfo& dev = *g.dev;
  const double fp32 = ladder::spec_fp32_gflops(dev), tf32 = ladder::spec_tf32_gflops(dev);
  const double ratio = fp32 > 0 && tf32 > 0 ? tf32 / fp32 : 8.0;  // 8: an H100's or H200's (sm_90a)
  const int64_t tiles = ((g.m + tf32_wgmma_specialized::TM - 1) / tf32_wgmma_specialized::TM) *
                        ((g.n + tf32_wgmma_specialized::TN - 1) / tf32_wgmma_specialized::TN);
  return double(tiles) * ratio < double(dev.sm_count);
}

// ---- few tiles, long k: TF32 split-K on 64 x 64 tiles --------------------------------------------

// tf32_02's tile loop on 64 x 64 tiles: 4 warps of 32 x 32 (2 x 4 m16n8k8 tiles each), 4 stages of
// 32 k (68 KB: three blocks an SM on an H100), no rounding (the tensor core cuts to TF32, as in 04).
using SmallTf32 = tf32_mma_sync::Config<64, 64, 32, 32, 4, false, 3>;
constexpr const char* kSmallTf32Name = "mma.sync 64x64x32_s4";
constexpr int64_t kSmallTf32MinSlice = 256;  // k per slice at least: 8 k steps of 32

// Block (x, y): tile x of C, k steps [y s, (y + 1) s) of 32, into slice y of `out` (m x n, pitch n;
// slices slice_stride floats apart). One slice: out is C.
template <bool VecA, bool VecB>
__global__ void __launch_bounds__(SmallTf32::THREADS, SmallTf32::MIN_BLOCKS)
    sgemm_tf32_split(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ out,
                     int64_t m, int64_t n, int64_t k, int k_steps_per_slice, int64_t slice_stride,
                     int64_t tiles_n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // mma.sync TF32 and cp.async need sm_80 (this step needs sm_90a; it exits 2 before launching)
#else
  const int k_steps = static_cast<int>((k + tf32_mma_sync::BK - 1) / tf32_mma_sync::BK);
  const int begin = static_cast<int>(blockIdx.y) * k_steps_per_slice;
  const int end = begin + k_steps_per_slice < k_steps ? begin + k_steps_per_slice : k_steps;
  tf32_mma_sync::mma_sync_tile<SmallTf32, VecA, VecB>(A, B, out + blockIdx.y * slice_stride, m, n, k, tiles_n,
                                                      begin, end);
#endif
}

using Tf32SplitKernel = void (*)(const float*, const float*, float*, int64_t, int64_t, int64_t, int, int64_t,
                                 int64_t);
Tf32SplitKernel tf32_split_kernel(bool vec_a, bool vec_b) {
  if (vec_a) return vec_b ? sgemm_tf32_split<true, true> : sgemm_tf32_split<true, false>;
  return vec_b ? sgemm_tf32_split<false, true> : sgemm_tf32_split<false, false>;
}

// Tiles, slices and blocks per SM: slices of whole k steps, tiles x slices filling the SMs' slots.
shape_classes::Plan tf32_split_plan(const Gemm& g) {
  const ladder::DeviceInfo& dev = *g.dev;
  shape_classes::Plan p{shape_classes::Kind::split_small};
  p.per_sm = std::max(ladder::blocks_per_sm(dev, reinterpret_cast<const void*>(tf32_split_kernel(true, true)),
                                            SmallTf32::THREADS, SmallTf32::kSmem),
                      1);
  p.blocks = ((g.m + SmallTf32::BM - 1) / SmallTf32::BM) * ((g.n + SmallTf32::BN - 1) / SmallTf32::BN);
  shape_classes::split(p, int64_t(dev.sm_count) * p.per_sm, g.k, kSmallTf32MinSlice, tf32_mma_sync::BK);
  return p;
}

void run_tf32_split(const Gemm& g) {
  const shape_classes::Plan p = tf32_split_plan(g);
  const Tf32SplitKernel kernel = tf32_split_kernel(g.k % 4 == 0, g.n % 4 == 0);
  ladder::require_shared_memory(reinterpret_cast<const void*>(kernel), SmallTf32::kSmem, *g.dev,
                                "sgemm tf32_05 64x64 split-K tile");
  const int64_t stride = split_k::slice_stride(g.m, g.n);
  float* const out = p.slices == 1 ? g.C : static_cast<float*>(g.workspace);
  // k steps per slice: k_slice is whole k steps where k is sliced; unsliced, the last step may be partial
  const int steps = static_cast<int>((p.k_slice + tf32_mma_sync::BK - 1) / tf32_mma_sync::BK);
  kernel<<<dim3(static_cast<unsigned>(p.blocks), static_cast<unsigned>(p.slices)), SmallTf32::THREADS,
           SmallTf32::kSmem, g.stream>>>(g.A, g.B, out, g.m, g.n, g.k, steps, stride,
                                         (g.n + SmallTf32::BN - 1) / SmallTf32::BN);
  CUDA_CHECK_LAUNCH();
  if (p.slices > 1) shape_classes::sum_slices(out, g.C, g.m, g.n, p.slices, stride, g.stream);
}

// ---- the classes ------------------------------------------------------------------------------------

enum class Route { fp32_skinny, tf32_split, tensor_tiles };

// Which kernel a shape gets: one of step 11's skinny fp32 kernels, the TF32 split-K, or step 04.
Route route(const Gemm& g) {
  switch (shape_classes::plan(g).kind) {
    case shape_classes::Kind::stream_b:
    case shape_classes::Kind::dot_rows:
      return Route::fp32_skinny;
    case shape_classes::Kind::split_small:
      return Route::tf32_split;
    case shape_classes::Kind::split_k:
      return too_few_tiles_for_the_tensor_cores(g) ? Route::tf32_split : Route::tensor_tiles;
    case shape_classes::Kind::pipelined:
      return Route::tensor_tiles;
  }
  return Route::tensor_tiles;
}

size_t workspace_bytes(const Gemm& g) {
  switch (route(g)) {
    case Route::fp32_skinny:
      return shape_classes::workspace_bytes(g);
    case Route::tf32_split: {
      const shape_classes::Plan p = tf32_split_plan(g);
      return p.slices == 1 ? 0 : static_cast<size_t>(p.slices * split_k::slice_stride(g.m, g.n)) * sizeof(float);
    }
    case Route::tensor_tiles:
      break;
  }
  return tf32_wgmma_specialized::workspace_bytes(g);
}

void launch(const Gemm& g) {
  switch (route(g)) {
    case Route::fp32_skinny:
      return shape_classes::launch(g);
    case Route::tf32_split:
      return run_tf32_split(g);
    case Route::tensor_tiles:
      return tf32_wgmma_specialized::launch(g);
  }
}

std::string describe(const Gemm& g) {
  switch (route(g)) {
    case Route::fp32_skinny:
      return "fp32 step 11's class, " + shape_classes::describe(g);
    case Route::tf32_split: {
      const shape_classes::Plan p = tf32_split_plan(g);
      const std::string cut = p.slices == 1 ? std::string(", k whole")
                                            : ", k in " + std::to_string(p.slices) + " slices of " +
                                                  std::to_string(p.k_slice);
      return "few tiles, long k: TF32 split-K, " + std::string(kSmallTf32Name) + ", " +
             std::to_string(p.blocks) + " tiles of 64x64" + cut + " (" + std::to_string(g.dev->sm_count) +
             " SMs x " + std::to_string(p.per_sm) + " blocks), partials summed 16 lanes per output";
    }
    case Route::tensor_tiles:
      break;
  }
  return "tiles for the tensor cores: step 04's " + tf32_wgmma_specialized::describe(g);
}

// Step 04's size limit (TMA's 32-bit coordinates) where step 04 runs. The split-K counts k steps in
// int (k < 2^36); the fp32 classes have no limit.
void require_size(const Gemm& g) {
  if (route(g) == Route::tensor_tiles) tf32_wgmma_tma::require_tma_sides(kId, g);
}

const Step kStep{kId, launch, nullptr, /*tunable=*/false, workspace_bytes, describe, Math::tf32, require_size};
LADDER_STEP(kStep);

}  // namespace sgemm::tf32_shape_classes
