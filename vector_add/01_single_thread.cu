// vector_add step 01: one GPU thread, <<<1, 1>>>.
// The CPU loop moved onto the device unchanged: a single thread walks all n elements. It is
// correct and shows the cost model at its worst — one of the 270,336 threads the H100 can hold at
// once (132 SMs x 2,048) does all the work, and every iteration waits on memory latency, not
// bandwidth.
// Changes from step 00: the data lives in device memory (cudaMemcpy in and out); the loop is a kernel.
// Costs: seconds at the default n (about 4 s on an H100, some 360 times the CPU loop's);
// the harness times it once or twice (see the time budget).
// Source: "CUDA编程入门", the first kernel add<<<1, 1>>>. Run: build/bin/vector_add_01_single_thread --n 10000000
#include "vector_add/vector_add.cuh"

namespace vector_add::single_thread {

__global__ void add_single_thread(const float* __restrict__ x, const float* __restrict__ y,
                                  float* __restrict__ r, int64_t n) {
  for (int64_t i = 0; i < n; ++i) r[i] = x[i] + y[i];
}

void launch(const ladder::DeviceInfo&, Arrays d, int64_t n, cudaStream_t stream) {
  add_single_thread<<<1, 1, 0, stream>>>(d.x, d.y, d.r, n);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"vector_add/01_single_thread", launch};
LADDER_STEP(kStep);

}  // namespace vector_add::single_thread
