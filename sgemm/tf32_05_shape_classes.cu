// sgemm tf32 step 05: shape classes — the tensor cores where C has tiles to give them, the
// bandwidth-bound kernels of fp32 step 11 where it does not.
// Step 04 is one design: 256 x 128 tiles of C, one block per SM, each tile a long run of wgmmas. At
// 4096^3 that is cuBLAS TF32's speed. At a GEMV-like shape it cannot be: with m <= 16, C has one
// tile row, 1/16 to 1/256 of each tile is real, and the problem is bound by reading B once (2 FLOPs
// per 4 bytes at m = 1), which any kernel that streams B at full bandwidth reaches; the tensor
// cores have nothing to speed up. The same holds for n <= 16 (A read once), and for a small C with a
// long k (64 x 64 x 65536: one tile for 132 SMs). So this step takes fp32 step 11's class rule and
// sends each class where its bound says:
//   m <= 16 or n <= 16        step 11's skinny kernels (gemm_stream_b, gemm_dot_rows): the streamed
//                             matrix read once at full bandwidth, k cut into slices when there are
//                             too few columns (or rows) to fill the GPU; fp32 FMAs, exact fp32
//                             products, well inside the TF32 bound;
//   few tiles, small C        step 11's 64 x 64 split-K (C's tiles less than half used by step
//                             10's 128 x 256 tiles): the whole GPU shares a small C by slicing k;
//   few tiles, long k         (step 11's other split class: 128 x 256 fp32 tiles sliced in k)
//                             step 04 while its tiles keep enough SMs busy: with R times the FMA
//                             rate per SM on the tensor cores (R = spec TF32 / spec FP32, 8 on an
//                             H100), t tiles on t SMs beat FMAs on all S SMs while t x R >= S;
//                             below that (fewer than 17 tiles of 256 x 128 on an H100) step 11's
//                             fp32 split-K on every SM. A TF32 split-K would beat both there; this
//                             step does not have one;
//   everything else           step 04: its tiles, its TF32 truncation.
// Changes from step 04: the class rule in front of it; the skinny, small-C and fewest-tiles classes
// run fp32 kernels. Nothing else: step 04 and step 11 are included unchanged.
// Costs: the fp32 classes' own costs (step 11: a workspace of slices x m x n floats where k is
// sliced); one more decision per call. The choice line names the class and the kernel.
// Needs sm_90a, as step 04 (its add_step line says NEEDS sm_90a); elsewhere the step exits 2.
// Sizes: the step 04 route keeps step 04's limit (m, n, k up to 2^31 - 256, TMA's 32-bit
// coordinates); the fp32 routes index in 64 bits.
// Source: beyond the posts; cuBLAS picks GEMV, split-K and tensor-core kernels by shape the same way.
// Run: build/bin/sgemm_tf32_05_shape_classes --m 1 --n 8192 --k 8192 (or --m 8192 --n 1, --m 8,
// --m 64 --n 64 --k 65536, --m 4096)
#include "11_shape_classes.cu"             // the class rule and the fp32 kernels, unchanged
#include "tf32_04_wgmma_specialized.cu"    // the tensor-core kernel, unchanged

#include <string>

namespace sgemm::tf32_shape_classes {

constexpr const char* kId = "sgemm/tf32_05_shape_classes";

// True where the tensor cores on step 04's tiles (one SM each) do fewer FLOPs per clock than FMAs
// on every SM: tiles x (spec TF32 / spec FP32) < SMs.
bool too_few_tiles_for_the_tensor_cores(const Gemm& g) {
  const ladder::DeviceInfo& dev = *g.dev;
  const double fp32 = ladder::spec_fp32_gflops(dev), tf32 = ladder::spec_tf32_gflops(dev);
  const double ratio = fp32 > 0 && tf32 > 0 ? tf32 / fp32 : 8.0;  // 8: an H100's, the only sm_90a GPU
  const int64_t tiles = ((g.m + tf32_wgmma_specialized::TM - 1) / tf32_wgmma_specialized::TM) *
                        ((g.n + tf32_wgmma_specialized::TN - 1) / tf32_wgmma_specialized::TN);
  return double(tiles) * ratio < double(dev.sm_count);
}

// Which kernel a shape gets: one of step 11's fp32 classes, or step 04.
bool fp32_class(const Gemm& g) {
  switch (shape_classes::plan(g).kind) {
    case shape_classes::Kind::stream_b:
    case shape_classes::Kind::dot_rows:
    case shape_classes::Kind::split_small:
      return true;
    case shape_classes::Kind::split_k:
      return too_few_tiles_for_the_tensor_cores(g);
    case shape_classes::Kind::pipelined:
      return false;
  }
  return false;
}

size_t workspace_bytes(const Gemm& g) {
  return fp32_class(g) ? shape_classes::workspace_bytes(g) : tf32_wgmma_specialized::workspace_bytes(g);
}

void launch(const Gemm& g) {
  if (fp32_class(g)) return shape_classes::launch(g);
  tf32_wgmma_specialized::launch(g);
}

std::string describe(const Gemm& g) {
  if (fp32_class(g)) return "fp32 step 11's class, " + shape_classes::describe(g);
  return "tiles for the tensor cores: step 04's " + tf32_wgmma_specialized::describe(g);
}

// Step 04's size limit (TMA's 32-bit coordinates) where step 04 runs; the fp32 classes have none.
void require_size(const Gemm& g) {
  if (!fp32_class(g)) tf32_wgmma_tma::require_tma_sides(kId, g);
}

const Step kStep{kId, launch, nullptr, /*tunable=*/false, workspace_bytes, describe, Math::tf32, require_size};
LADDER_STEP(kStep);

}  // namespace sgemm::tf32_shape_classes
