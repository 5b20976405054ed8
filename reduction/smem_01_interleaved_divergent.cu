// reduction side ladder "smem", step 01: the tree in shared memory, interleaved addressing with
// divergent branching (Mark Harris, "Optimizing Parallel Reduction in CUDA", kernel 1).
// The main ladder follows the post and sums in place in global memory; Harris's kernels first copy
// the block's slice into shared memory (one coalesced load per thread) and run the tree there, where
// a pass costs a shared-memory access instead of a round trip through L1/L2. This side ladder
// repeats his first three kernels on the same harness, so their lessons are measured beside the
// post's: divergence (this step), bank conflicts (smem_02) and sequential addressing (smem_03).
// The tree: in pass k (s = 1, 2, 4, ...) thread tid adds sdata[tid + s] into sdata[tid] when tid is
// a multiple of 2s. As in main step 01, the active lanes are scattered over every warp (divergence).
// Changes from main step 01: the slice goes through shared memory; global memory is read once.
// Costs: 256 x 4 B of shared memory per block; the % on every pass; all 8 warps have lanes adding
// in the first five passes (then 4, 2, 1), fewer and fewer of their lanes each pass.
// Source: M. Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007), reduction #1.
// Run: build/bin/reduction_smem_01_interleaved_divergent
#include "reduction/reduction.cuh"

namespace reduction::smem_divergent {

constexpr int kThreads = 256;  // Harris's block size
static_assert(kThreads % 32 == 0 && (kThreads & (kThreads - 1)) == 0, "a power-of-two tree of whole warps");
static_assert(fits_int32_partial(kThreads), "an int32 partial of one slice cannot overflow");

__global__ void reduce_smem_divergent(const int* data, int64_t n, int* partials) {
  __shared__ int sdata[kThreads];
  const int tid = threadIdx.x;
  const int64_t start = static_cast<int64_t>(blockIdx.x) * kThreads;
  // Step 1: the slice into shared memory (zeros past the end of the array: they add nothing).
  sdata[tid] = tid < values_in_block(n, start, kThreads) ? data[start + tid] : 0;
  __syncthreads();
  // Step 2: the tree, neighbours first.
  for (int s = 1; s < kThreads; s *= 2) {
    if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = sdata[0];
}

void launch(int* data, int64_t n, int* partials, const BlockGrid& grid, cudaStream_t stream) {
  reduce_smem_divergent<<<grid.blocks, grid.threads, 0, stream>>>(data, n, partials);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"reduction/smem_01_interleaved_divergent", launch, kThreads, 1};
LADDER_STEP(kStep);

}  // namespace reduction::smem_divergent
