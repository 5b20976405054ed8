// separable_conv step 03: the taps in __constant__ memory — one broadcast per warp instead of 32 loads.
// In step 01 every thread of a warp loads the same tap at the same moment, through the same path as
// the image: half of the global load instructions fetch taps. Constant memory has its own small
// cache, built for exactly this pattern: when all threads of a warp read one address, it is read
// once and broadcast to all 32. Here the taps are copied into two __constant__ arrays once (a
// device-to-device cudaMemcpyToSymbolAsync, outside the timed region) and the kernels read them there:
// the global load requests per pass fall by about half, which is the post's nvprof figure (global
// load transactions 61,107,202 -> 30,553,602 for the row pass).
// Changes from step 01: taps[i] becomes c_row_taps[i] / c_col_taps[i]; the taps pointers are gone.
// Costs: 2 x kMaxTaps floats of the 64 KB constant bank; a warp whose threads read different
// constant addresses would be serialized (these never do: i and j are the same in every thread).
// Source: "separable convolution with CUDA", section 三 (constant memory for the kernel data).
// Run: build/bin/separable_conv_03_constant_taps
#include "separable_conv/separable_conv.cuh"

namespace separable_conv::constant_taps {

constexpr int kBlock = 32;  // the post's 32 x 32 threads: a warp is 32 consecutive pixels of a row
static_assert(kBlock * kBlock <= 1024, "a block holds at most 1024 threads");
static_assert(2 * kMaxTaps * sizeof(float) <= 64 * 1024, "both sets of taps fit the constant bank");

__constant__ float c_row_taps[kMaxTaps];
__constant__ float c_col_taps[kMaxTaps];

// tmp[y][x] = sum_i c_row_taps[i] * in[y][x + i - R]; pixels outside the image count as 0.
__global__ void row_pass_constant(const float* in, float* tmp, int64_t width, int64_t height, int k) {
  const int r = k / 2;
  for (int64_t y = blockIdx.y * int64_t(blockDim.y) + threadIdx.y; y < height; y += int64_t(blockDim.y) * gridDim.y)
    for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < width; x += int64_t(blockDim.x) * gridDim.x) {
      float sum = 0;
      for (int i = 0; i < k; ++i) {
        const int64_t xi = x + i - r;
        if (xi >= 0 && xi < width) sum += c_row_taps[i] * in[y * width + xi];
      }
      tmp[y * width + x] = sum;
    }
}

// out[y][x] = sum_j c_col_taps[j] * tmp[y + j - R][x]; rows outside the image count as 0.
__global__ void column_pass_constant(const float* tmp, float* out, int64_t width, int64_t height, int k) {
  const int r = k / 2;
  for (int64_t y = blockIdx.y * int64_t(blockDim.y) + threadIdx.y; y < height; y += int64_t(blockDim.y) * gridDim.y)
    for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < width; x += int64_t(blockDim.x) * gridDim.x) {
      float sum = 0;
      for (int j = 0; j < k; ++j) {
        const int64_t yj = y + j - r;
        if (yj >= 0 && yj < height) sum += c_col_taps[j] * tmp[yj * width + x];
      }
      out[y * width + x] = sum;
    }
}

// The taps from device memory into the constant arrays, on the step's stream.
void load_taps(const Args& a) {
  const size_t bytes = sizeof(float) * a.taps;
  CUDA_CHECK(cudaMemcpyToSymbolAsync(c_row_taps, a.row_taps, bytes, 0, cudaMemcpyDeviceToDevice, a.stream));
  CUDA_CHECK(cudaMemcpyToSymbolAsync(c_col_taps, a.col_taps, bytes, 0, cudaMemcpyDeviceToDevice, a.stream));
}

void launch(const Args& a) {
  const dim3 block(kBlock, kBlock), grid = tile_grid(a.width, a.height, kBlock, kBlock);
  row_pass_constant<<<grid, block, 0, a.stream>>>(a.in, a.tmp, a.width, a.height, a.taps);
  CUDA_CHECK_LAUNCH();
  column_pass_constant<<<grid, block, 0, a.stream>>>(a.tmp, a.out, a.width, a.height, a.taps);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"separable_conv/03_constant_taps", launch,
                 "32 x 32 threads, one output each; taps in __constant__ memory, image in global memory",
                 load_taps};
LADDER_STEP(kStep);

}  // namespace separable_conv::constant_taps
