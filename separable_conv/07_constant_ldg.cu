// separable_conv step 07: step 03's kernels with __ldg on the image — constant taps, read-only image.
// The taps come from the constant cache as broadcasts (step 03), and the image through the
// read-only data path (step 06). The post measured this pair as "const + ldg" (unified cache hit
// rate 80% / 94.5% for the column / row pass, against 42.7% / 41.7% for constant taps alone). The
// chapter sets it beside the shared-memory tiles of steps 04-05: for a small stencil the L1 cache
// can do the tiling by itself, without their staging, barriers and halo bookkeeping.
// Changes from step 03: in[...] / tmp[...] are read with __ldg; nothing else.
// Costs: on the H100 the column loop as nvcc 13.0 orders it issues each __ldg only after the FMA
// of the one before (step 03's keeps two image loads in flight), so the column pass is slower
// than step 03's (the chapter).
// Source: "separable convolution with CUDA", section 五 (read-only texture cache), "const + ldg".
// Run: build/bin/separable_conv_07_constant_ldg
#include "03_constant_taps.cu"  // c_row_taps, c_col_taps and load_taps

namespace separable_conv::constant_ldg {

using constant_taps::c_col_taps;
using constant_taps::c_row_taps;

constexpr int kBlock = 32;  // the post's 32 x 32 threads: a warp is 32 consecutive pixels of a row
static_assert(kBlock * kBlock <= 1024, "a block holds at most 1024 threads");

// tmp[y][x] = sum_i c_row_taps[i] * in[y][x + i - R]; pixels outside the image count as 0.
__global__ void row_pass_constant_ldg(const float* in, float* tmp, int64_t width, int64_t height, int k) {
  const int r = k / 2;
  for (int64_t y = blockIdx.y * int64_t(blockDim.y) + threadIdx.y; y < height; y += int64_t(blockDim.y) * gridDim.y)
    for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < width; x += int64_t(blockDim.x) * gridDim.x) {
      float sum = 0;
      for (int i = 0; i < k; ++i) {
        const int64_t xi = x + i - r;
        if (xi >= 0 && xi < width) sum += c_row_taps[i] * __ldg(&in[y * width + xi]);
      }
      tmp[y * width + x] = sum;
    }
}

// out[y][x] = sum_j c_col_taps[j] * tmp[y + j - R][x]; rows outside the image count as 0.
__global__ void column_pass_constant_ldg(const float* tmp, float* out, int64_t width, int64_t height, int k) {
  const int r = k / 2;
  for (int64_t y = blockIdx.y * int64_t(blockDim.y) + threadIdx.y; y < height; y += int64_t(blockDim.y) * gridDim.y)
    for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < width; x += int64_t(blockDim.x) * gridDim.x) {
      float sum = 0;
      for (int j = 0; j < k; ++j) {
        const int64_t yj = y + j - r;
        if (yj >= 0 && yj < height) sum += c_col_taps[j] * __ldg(&tmp[yj * width + x]);
      }
      out[y * width + x] = sum;
    }
}

void launch(const Args& a) {
  const dim3 block(kBlock, kBlock), grid = tile_grid(a.width, a.height, kBlock, kBlock);
  row_pass_constant_ldg<<<grid, block, 0, a.stream>>>(a.in, a.tmp, a.width, a.height, a.taps);
  CUDA_CHECK_LAUNCH();
  column_pass_constant_ldg<<<grid, block, 0, a.stream>>>(a.tmp, a.out, a.width, a.height, a.taps);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"separable_conv/07_constant_ldg", launch,
                 "32 x 32 threads, one output each; taps in __constant__ memory, image read with __ldg",
                 constant_taps::load_taps};
LADDER_STEP(kStep);

}  // namespace separable_conv::constant_ldg
