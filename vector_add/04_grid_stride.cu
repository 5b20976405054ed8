// vector_add step 04: a grid-stride loop over SMs x k blocks of 256 threads.
// Steps 02/03 ran one block, i.e. one SM. Now the grid has k resident blocks on every SM, with
// k = (threads an SM can hold) / 256 read from the device (8 on an H100: 1,056 blocks), and each
// thread strides by the whole grid: i, i + gridDim.x*blockDim.x, ... A warp still reads 32
// consecutive floats (coalesced), and every SM has 64 warps to switch between while loads are in
// flight. Enough blocks to fill the machine once, not n/256 of them: for this loop a block that is
// not resident is only a queue entry, and the loop covers any n (step 07's one chunk per block is
// a kernel shape that does gain from many blocks).
// Changes from step 02: blockIdx.x in the index, gridDim.x*blockDim.x as the stride, int64 indices.
// Costs: close to, not at, the copy ceiling. The compiler unrolls the loop 4 times and issues all 8
// loads (32 bytes per thread) before the first add (cuobjdump -sass), yet DRAM is idle part of the
// time (Nsight Compute, H100, 2026-11-26: 80-82% busy) and a warp waits about 3.5 us for its loads,
// nine times the idle latency (n = 10^8, 2026-11-27): the requests queue. Step 07 moves 16 bytes
// per access and 64 bytes per thread.
// Source: "CUDA编程入门", section 第二次优化(Blocks), add_parallel<<<SMs x k, 256>>>.
// Run: build/bin/vector_add_04_grid_stride --n 100000000
#include "vector_add/vector_add.cuh"

namespace vector_add::grid_stride {

constexpr int kThreads = 256;
static_assert(kThreads % 32 == 0, "whole warps");

__global__ void add_grid_stride(const float* __restrict__ x, const float* __restrict__ y,
                                float* __restrict__ r, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    r[i] = x[i] + y[i];
}

void launch(const ladder::DeviceInfo& dev, Arrays d, int64_t n, cudaStream_t stream) {
  const int64_t wanted = (n + kThreads - 1) / kThreads;  // no idle blocks for small n
  const int blocks = static_cast<int>(std::min<int64_t>(ladder::resident_blocks(dev, kThreads), wanted));
  add_grid_stride<<<blocks, kThreads, 0, stream>>>(d.x, d.y, d.r, n);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"vector_add/04_grid_stride", launch};
LADDER_STEP(kStep);

}  // namespace vector_add::grid_stride
