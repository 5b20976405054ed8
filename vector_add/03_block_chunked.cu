// vector_add step 03: one block of 256 threads, thread t takes one contiguous chunk.
// The "CPU-friendly" split: thread t owns [t*chunk, (t+1)*chunk). Each thread alone walks memory
// in order, but at any instant the 32 threads of a warp are chunk floats apart, so one warp-wide
// load touches 32 different lines and uses 4 bytes of each 32-byte sector. The contrast with step
// 02 is the lesson: same threads, same work, only the index mapping differs.
// Changes from step 02: i = t*chunk + k instead of i = t + k*256.
// Costs: 32 sectors per request instead of 4 (Nsight Compute, Memory Workload Analysis): eight
// times the L1/L2 traffic. L1 keeps the rest of each sector for the thread's next iterations, so
// DRAM reads the same bytes as step 02, and with one latency-bound block this step is even a little
// faster. Once the GPU is full (step 04) bandwidth is the limit and unused sectors waste it.
// Source: "CUDA编程入门", the chunked indexing the post warns against. Run: build/bin/vector_add_03_block_chunked
#include "vector_add/vector_add.cuh"

namespace vector_add::block_chunked {

constexpr int kThreads = 256;

__global__ void add_block_chunked(const float* __restrict__ x, const float* __restrict__ y,
                                  float* __restrict__ r, int64_t n) {
  const int64_t chunk = (n + blockDim.x - 1) / blockDim.x;  // the last chunk may be short or empty
  const int64_t begin = threadIdx.x * chunk;
  const int64_t end = begin + chunk < n ? begin + chunk : n;
  for (int64_t i = begin; i < end; ++i) r[i] = x[i] + y[i];
}

void launch(const ladder::DeviceInfo&, Arrays d, int64_t n, cudaStream_t stream) {
  add_block_chunked<<<1, kThreads, 0, stream>>>(d.x, d.y, d.r, n);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"vector_add/03_block_chunked", launch};
LADDER_STEP(kStep);

}  // namespace vector_add::block_chunked
