// separable_conv step 01: the plain kernels — image and taps in global memory, pageable host buffers.
// Two kernels, as the post's first CUDA version: the row pass writes an intermediate image, the
// column pass reads it back. One thread per output pixel on 32 x 32 blocks, grid-stride loops over
// the image as in the post; each thread reads its K taps and K neighbours straight from global
// memory, with a bounds check per tap instead of the post's zero-extended input image (our input
// and output are exactly width x height). The taps are the same for every thread of a warp, yet
// each warp loads them again from global memory, K loads per output on top of the K image loads.
// This step owns its transfers: total_ms is image and taps in (from malloc'd, pageable memory),
// both passes, result out; kernel_ms is the two passes alone.
// Costs: two passes move 16 B per pixel through DRAM (the intermediate is written and read back),
// twice the single-pass floor; every tap is a load instruction (the image neighbours hit L1).
// Source: "separable convolution with CUDA", section 二 (block 32 x 32). Run: build/bin/separable_conv_01_naive
#include "separable_conv/separable_conv.cuh"

namespace separable_conv::naive {

constexpr int kBlock = 32;  // the post's 32 x 32 threads: a warp is 32 consecutive pixels of a row
static_assert(kBlock * kBlock <= 1024, "a block holds at most 1024 threads");

// tmp[y][x] = sum_i taps[i] * in[y][x + i - R]; pixels outside the image count as 0.
__global__ void row_pass_global(const float* in, float* tmp, const float* taps, int64_t width,
                                int64_t height, int k) {
  const int r = k / 2;
  for (int64_t y = blockIdx.y * int64_t(blockDim.y) + threadIdx.y; y < height; y += int64_t(blockDim.y) * gridDim.y)
    for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < width; x += int64_t(blockDim.x) * gridDim.x) {
      float sum = 0;
      for (int i = 0; i < k; ++i) {
        const int64_t xi = x + i - r;
        if (xi >= 0 && xi < width) sum += taps[i] * in[y * width + xi];
      }
      tmp[y * width + x] = sum;
    }
}

// out[y][x] = sum_j taps[j] * tmp[y + j - R][x]; rows outside the image count as 0.
__global__ void column_pass_global(const float* tmp, float* out, const float* taps, int64_t width,
                                   int64_t height, int k) {
  const int r = k / 2;
  for (int64_t y = blockIdx.y * int64_t(blockDim.y) + threadIdx.y; y < height; y += int64_t(blockDim.y) * gridDim.y)
    for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < width; x += int64_t(blockDim.x) * gridDim.x) {
      float sum = 0;
      for (int j = 0; j < k; ++j) {
        const int64_t yj = y + j - r;
        if (yj >= 0 && yj < height) sum += taps[j] * tmp[yj * width + x];
      }
      out[y * width + x] = sum;
    }
}

void launch(const Args& a) {
  const dim3 block(kBlock, kBlock), grid = tile_grid(a.width, a.height, kBlock, kBlock);
  row_pass_global<<<grid, block, 0, a.stream>>>(a.in, a.tmp, a.row_taps, a.width, a.height, a.taps);
  CUDA_CHECK_LAUNCH();
  column_pass_global<<<grid, block, 0, a.stream>>>(a.tmp, a.out, a.col_taps, a.width, a.height, a.taps);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"separable_conv/01_naive", launch,
                 "32 x 32 threads, one output each; image and taps read from global memory",
                 nullptr, Transfers::pageable};
LADDER_STEP(kStep);

}  // namespace separable_conv::naive
