// reduction step 01: neighbored pairs, tid % (2*stride) — the divergent tree.
// One thread block sums one slice of 512 values in place in global memory: in pass k (stride
// 1, 2, 4, ...) thread tid adds its neighbour at tid + stride when tid is a multiple of 2*stride,
// then all threads wait at __syncthreads(). The block's sum ends in slice[0] and goes to
// partials[blockIdx.x]; the harness copies the partials to the host and adds them there, as the post.
// Changes from step 00: our own kernel; the posts' plan (a tree per block, the host adds the blocks).
// Costs: divergence. In pass 1 only the even threads of every warp add, in pass 2 every fourth...:
// every warp of the block issues all 9 passes while fewer and fewer of its lanes do work (ncu on
// an H100: branch uniformity smsp__sass_average_branch_targets_threads_uniform.pct 69%, active
// lanes per instruction smsp__thread_inst_executed_per_inst_executed.ratio 29.2 of 32, diluted by
// the bookkeeping all lanes run). The % is an integer division on every pass.
// Source: "【CUDA】Branch Divergence and Unrolling Loop", 1.2 并行规约中的发散, reduceNeighbored.
// Run: build/bin/reduction_01_neighbored
#include "reduction/reduction.cuh"

namespace reduction::neighbored {

constexpr int kThreads = 512;  // the post's blockSize
static_assert(kThreads % 32 == 0 && (kThreads & (kThreads - 1)) == 0, "a power-of-two tree of whole warps");
static_assert(fits_int32_partial(kThreads), "an int32 partial of one slice cannot overflow");

__global__ void reduce_neighbored(int* data, int64_t n, int* partials) {
  const int tid = threadIdx.x;
  const int64_t start = static_cast<int64_t>(blockIdx.x) * blockDim.x;
  int* slice = data + start;
  const int count = values_in_block(n, start, blockDim.x);  // < blockDim.x only in the last block
  // No early return (the post's `if (index >= N) return;`): every thread must reach the barrier.
  for (int stride = 1; stride < blockDim.x; stride *= 2) {
    if (tid % (2 * stride) == 0 && tid + stride < count) slice[tid] += slice[tid + stride];
    __syncthreads();  // this pass's sums are visible before the next pass reads them
  }
  if (tid == 0) partials[blockIdx.x] = slice[0];
}

void launch(int* data, int64_t n, int* partials, const BlockGrid& grid, cudaStream_t stream) {
  reduce_neighbored<<<grid.blocks, grid.threads, 0, stream>>>(data, n, partials);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"reduction/01_neighbored", launch, kThreads, 1};
LADDER_STEP(kStep);

}  // namespace reduction::neighbored
