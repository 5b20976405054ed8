// reduction side ladder "smem", step 03: sequential addressing (Harris, kernel 3).
// The stride starts at half the block and halves: thread tid < s adds sdata[tid + s] into
// sdata[tid]. A warp's lanes now touch 32 consecutive words — 32 different banks — on both sides:
// no bank conflicts at any pass, and the active threads are still packed into whole warps.
// Changes from smem_02: s runs 128, 64, ..., 1 and the index is tid (main step 03's order, in
// shared memory).
// Costs: half the threads are idle from the first pass on (Harris's next kernel, like main step 04,
// gives them a first add during the load).
// Source: M. Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007), reduction #3.
// Run: build/bin/reduction_smem_03_sequential
#include "reduction/reduction.cuh"

namespace reduction::smem_sequential {

constexpr int kThreads = 256;
static_assert(kThreads % 32 == 0 && (kThreads & (kThreads - 1)) == 0, "a power-of-two tree of whole warps");
static_assert(fits_int32_partial(kThreads), "an int32 partial of one slice cannot overflow");

__global__ void reduce_smem_sequential(const int* data, int64_t n, int* partials) {
  __shared__ int sdata[kThreads];
  const int tid = threadIdx.x;
  const int64_t start = static_cast<int64_t>(blockIdx.x) * kThreads;
  // Step 1: the slice into shared memory (zeros past the end of the array: they add nothing).
  sdata[tid] = tid < values_in_block(n, start, kThreads) ? data[start + tid] : 0;
  __syncthreads();
  // Step 2: the tree, halves first: consecutive threads, consecutive banks.
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = sdata[0];
}

void launch(int* data, int64_t n, int* partials, const BlockGrid& grid, cudaStream_t stream) {
  reduce_smem_sequential<<<grid.blocks, grid.threads, 0, stream>>>(data, n, partials);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"reduction/smem_03_sequential", launch, kThreads, 1};
LADDER_STEP(kStep);

}  // namespace reduction::smem_sequential
