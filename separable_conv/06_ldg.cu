// separable_conv step 06: step 01's plain kernels with __ldg on the image and the taps.
// __ldg(&p[i]) loads through the read-only (texture) data path, ld.global.nc: the compiler may
// assume the data does not change during the kernel, so it can keep it in the unified L1/texture
// cache without coherence worries and schedule the loads more freely. A K-tap kernel reads each
// image pixel K times (neighbouring threads share neighbours) and every tap once per thread — the
// reuse a cache catches. The post reads it in the unified cache hit rate (Nsight Compute:
// l1tex__t_sector_hit_rate.pct, and l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct for
// plain loads): 51% / 51% for step 01's column / row pass, 84% / 96% with __ldg on a GTX 1060.
// Since Volta, plain global loads are cached in the same L1 as well, so on an H100 the gap is
// smaller than on the post's Pascal: the chapter shows what is left.
// Changes from step 01: taps[i] and in[...] / tmp[...] are read with __ldg; nothing else.
// Costs: the data must really be read-only for the kernel's duration (it is: in and tmp are only
// read by the pass that reads them). On the H100 ptxas 13.0 gives the column kernel 40 registers a
// thread (step 01's: 32), so one 1,024-thread block fits an SM instead of two: half the warps, and
// the column pass is slower than step 01's (the chapter).
// Source: "separable convolution with CUDA", section 五 (read-only texture cache), "simplest + ldg".
// Run: build/bin/separable_conv_06_ldg
#include "separable_conv/separable_conv.cuh"

namespace separable_conv::ldg {

constexpr int kBlock = 32;  // the post's 32 x 32 threads: a warp is 32 consecutive pixels of a row
static_assert(kBlock * kBlock <= 1024, "a block holds at most 1024 threads");

// tmp[y][x] = sum_i taps[i] * in[y][x + i - R]; pixels outside the image count as 0.
__global__ void row_pass_ldg(const float* in, float* tmp, const float* taps, int64_t width,
                             int64_t height, int k) {
  const int r = k / 2;
  for (int64_t y = blockIdx.y * int64_t(blockDim.y) + threadIdx.y; y < height; y += int64_t(blockDim.y) * gridDim.y)
    for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < width; x += int64_t(blockDim.x) * gridDim.x) {
      float sum = 0;
      for (int i = 0; i < k; ++i) {
        const int64_t xi = x + i - r;
        if (xi >= 0 && xi < width) sum += __ldg(&taps[i]) * __ldg(&in[y * width + xi]);
      }
      tmp[y * width + x] = sum;
    }
}

// out[y][x] = sum_j taps[j] * tmp[y + j - R][x]; rows outside the image count as 0.
__global__ void column_pass_ldg(const float* tmp, float* out, const float* taps, int64_t width,
                                int64_t height, int k) {
  const int r = k / 2;
  for (int64_t y = blockIdx.y * int64_t(blockDim.y) + threadIdx.y; y < height; y += int64_t(blockDim.y) * gridDim.y)
    for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < width; x += int64_t(blockDim.x) * gridDim.x) {
      float sum = 0;
      for (int j = 0; j < k; ++j) {
        const int64_t yj = y + j - r;
        if (yj >= 0 && yj < height) sum += __ldg(&taps[j]) * __ldg(&tmp[yj * width + x]);
      }
      out[y * width + x] = sum;
    }
}

void launch(const Args& a) {
  const dim3 block(kBlock, kBlock), grid = tile_grid(a.width, a.height, kBlock, kBlock);
  row_pass_ldg<<<grid, block, 0, a.stream>>>(a.in, a.tmp, a.row_taps, a.width, a.height, a.taps);
  CUDA_CHECK_LAUNCH();
  column_pass_ldg<<<grid, block, 0, a.stream>>>(a.tmp, a.out, a.col_taps, a.width, a.height, a.taps);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"separable_conv/06_ldg", launch,
                 "32 x 32 threads, one output each; image and taps read with __ldg (read-only path)"};
LADDER_STEP(kStep);

}  // namespace separable_conv::ldg
