// reduction step 04: each thread block first adds two data blocks.
// A block now owns 2 x 512 consecutive values: every thread adds slice[tid + 512] to slice[tid]
// (two independent loads in flight per thread instead of one), then the interleaved tree of
// step 03 runs on the first 512. Half as many blocks, and no thread idles in the first pass.
// Changes from step 03: values_per_block 1024, one folding add before the tree.
// Costs: half the blocks, so half the warps in flight to hide latency on a small n; the tree
// itself is unchanged, with its 9 barriers.
// Source: "【CUDA】Branch Divergence and Unrolling Loop", 二、UNrolling Loops, reduceUnrolling
// (launched as <<<grid.x / 2, block>>>).
// Run: build/bin/reduction_04_unroll2
#include "reduction/reduction.cuh"

namespace reduction::unroll2 {

constexpr int kThreads = 512;
constexpr int kDataBlocks = 2;
static_assert(kThreads % 32 == 0 && (kThreads & (kThreads - 1)) == 0, "a power-of-two tree of whole warps");
static_assert(fits_int32_partial(kThreads * kDataBlocks), "an int32 partial of one slice cannot overflow");

__global__ void reduce_interleaved_unroll2(int* data, int64_t n, int* partials) {
  const int tid = threadIdx.x;
  const int64_t start = static_cast<int64_t>(blockIdx.x) * blockDim.x * kDataBlocks;
  int* slice = data + start;
  const int count = values_in_block(n, start, kDataBlocks * blockDim.x);

  // Step 1: fold the second data block onto the first (the post skips this in a partial last block
  // and loses its values; the guard keeps every one that exists).
  if (tid + blockDim.x < count) slice[tid] += slice[tid + blockDim.x];
  __syncthreads();

  // Step 2: the interleaved tree of step 03 over the first data block.
  const int first = min(count, static_cast<int>(blockDim.x));
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride && tid + stride < first) slice[tid] += slice[tid + stride];
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = slice[0];
}

void launch(int* data, int64_t n, int* partials, const BlockGrid& grid, cudaStream_t stream) {
  reduce_interleaved_unroll2<<<grid.blocks, grid.threads, 0, stream>>>(data, n, partials);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"reduction/04_unroll2", launch, kThreads, kDataBlocks};
LADDER_STEP(kStep);

}  // namespace reduction::unroll2
