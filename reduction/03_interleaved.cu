// reduction step 03: interleaved pairs, the stride halving from blockDim/2.
// Thread tid adds slice[tid + stride] to slice[tid] for tid < stride, with stride = 256, 128, ..., 1.
// The active threads are packed as in step 02, and now their addresses are too: a warp reads 32
// consecutive ints (one 128-byte line, 4 sectors) from each half and writes 32 consecutive ints.
// Changes from step 02: pairs half a slice apart instead of neighbours; the index is just tid.
// Costs: still one __syncthreads per pass and a round trip to memory for every partial sum; the
// first pass has half of the threads idle before it starts (step 04 gives them loads to do).
// In shared memory this is also the conflict-free order: consecutive threads, consecutive banks.
// Source: "【CUDA】Branch Divergence and Unrolling Loop", 1.2 并行规约中的发散, Interleaved pair.
// Run: build/bin/reduction_03_interleaved
#include "reduction/reduction.cuh"

namespace reduction::interleaved {

constexpr int kThreads = 512;
static_assert(kThreads % 32 == 0 && (kThreads & (kThreads - 1)) == 0, "a power-of-two tree of whole warps");
static_assert(fits_int32_partial(kThreads), "an int32 partial of one slice cannot overflow");

__global__ void reduce_interleaved(int* data, int64_t n, int* partials) {
  const int tid = threadIdx.x;
  const int64_t start = static_cast<int64_t>(blockIdx.x) * blockDim.x;
  int* slice = data + start;
  const int count = values_in_block(n, start, blockDim.x);
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride && tid + stride < count) slice[tid] += slice[tid + stride];
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = slice[0];
}

void launch(int* data, int64_t n, int* partials, const BlockGrid& grid, cudaStream_t stream) {
  reduce_interleaved<<<grid.blocks, grid.threads, 0, stream>>>(data, n, partials);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"reduction/03_interleaved", launch, kThreads, 1};
LADDER_STEP(kStep);

}  // namespace reduction::interleaved
