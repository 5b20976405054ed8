// vector_add step 02: one block of 256 threads, thread t takes t, t+256, t+512, ...
// At any instant the 32 threads of a warp touch 32 consecutive floats: one 128-byte line per array,
// fetched as 4 fully used 32-byte sectors. This is coalescing — "consecutive in space" across the
// warp, where the CPU wants "consecutive in time" for one thread.
// Changes from step 01: 256 threads share the loop, interleaved by threadIdx.x.
// Costs: still one block, so one SM of the 132 does all the work; Nsight Compute shows 4 sectors
// per request (l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum / ..._requests.sum) — ideal.
// Source: "CUDA编程入门", add_stride<<<1, 256>>>. Run: build/bin/vector_add_02_block_strided
#include "vector_add/vector_add.cuh"

namespace vector_add::block_strided {

constexpr int kThreads = 256;
static_assert(kThreads % 32 == 0, "whole warps, so every warp reads whole 128-byte lines");

__global__ void add_block_strided(const float* __restrict__ x, const float* __restrict__ y,
                                  float* __restrict__ r, int64_t n) {
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) r[i] = x[i] + y[i];
}

void launch(const ladder::DeviceInfo&, Arrays d, int64_t n, cudaStream_t stream) {
  add_block_strided<<<1, kThreads, 0, stream>>>(d.x, d.y, d.r, n);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"vector_add/02_block_strided", launch};
LADDER_STEP(kStep);

}  // namespace vector_add::block_strided
