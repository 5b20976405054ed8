// transpose step 00: the ceiling — a plain copy of the same bytes.
// Not a transpose: every element is read once and written once, both in order, which is the least
// any transpose has to move. What this kernel reaches is what a transpose could reach if it had no
// second, crossing index; the harness prints cudaMemcpy device-to-device of the same bytes beside it,
// and the copy ceiling (common/: the best of cudaMemcpy D2D and a family of tuned float4 copy
// kernels, on the step's own bytes) that every later step is measured against.
// Changes: none; this is the reference point of the ladder, not a step of the climb.
// Costs: nothing; its output is rows x cols (a copy), checked against the input itself.
// Source: the copy baseline of NVIDIA's "An Efficient Matrix Transpose in CUDA C/C++" (Mark Harris)
// and of cuda-samples' transpose; "CUDA编程入门" gives the grid-stride loop (第二次优化(Blocks)).
// Run: build/bin/transpose_00_copy --rows 8192 --cols 8192
#include "transpose/transpose.cuh"

#include <algorithm>

namespace transpose::copy {

constexpr int kThreads = 256;
static_assert(kThreads % 32 == 0, "whole warps");

// Grid-stride, one float per thread per trip: the same scalar accesses a naive transpose makes,
// minus the transposition.
__global__ void copy_grid_stride(const float* __restrict__ in, float* __restrict__ out, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = in[i];
}

void launch(const ladder::DeviceInfo& dev, const float* in, float* out, int64_t rows, int64_t cols,
            cudaStream_t stream) {
  const int64_t n = rows * cols;
  const int64_t wanted = (n + kThreads - 1) / kThreads;
  const int blocks = static_cast<int>(std::min<int64_t>(ladder::resident_blocks(dev, kThreads), wanted));
  copy_grid_stride<<<blocks, kThreads, 0, stream>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"transpose/00_copy", launch,
                 "grid-stride copy, 256-thread blocks, one float per thread per trip", Output::copied};
LADDER_STEP(kStep);

}  // namespace transpose::copy
