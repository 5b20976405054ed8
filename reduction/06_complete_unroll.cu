// reduction step 06: the tree completely unrolled, the block size a template parameter.
// With kBlock known at compile time the loop `for (stride = blockDim.x/2; stride > 32; ...)`
// becomes straight-line code: `if constexpr (kBlock >= 1024)` removes the passes a smaller block
// does not have, and what remains has no loop counter, no compare-and-branch per pass, and
// constant offsets folded into the load and store instructions.
// Changes from step 05: the tree's passes spelled out per block size; the kernel is a template.
// Costs: one instantiation per block size (this step instantiates one, kThreads = 512); the gain is
// instructions, which matter little once the kernel waits on memory: on the H100 step 06 is level
// with step 05 within the noise of kernel times (the chapter's step 06).
// Source: "【CUDA】Branch Divergence and Unrolling Loop", 二、UNrolling Loops,
// reduceCompleteUnrollWarps8 (there with blockDim.x tested at run time).
// Run: build/bin/reduction_06_complete_unroll
#include "05_unroll8_warps.cu"  // fold_data_blocks, warp_reduce_volatile

namespace reduction::complete_unroll {

constexpr int kThreads = 512;
constexpr int kDataBlocks = 8;
static_assert(kThreads >= 64 && kThreads <= 1024, "the unrolled passes cover 1024 -> 64");
static_assert((kThreads & (kThreads - 1)) == 0, "a power-of-two tree");
static_assert(fits_int32_partial(kThreads * kDataBlocks), "an int32 partial of one slice cannot overflow");

// Step 2 of steps 06-07: slice[0 .. first) -> slice[0 .. 64), every pass unrolled at compile time.
template <int kBlock>
__device__ __forceinline__ void tree_to_64(int* slice, int tid, int first) {
  if constexpr (kBlock >= 1024) {
    if (tid < 512 && tid + 512 < first) slice[tid] += slice[tid + 512];
    __syncthreads();
  }
  if constexpr (kBlock >= 512) {
    if (tid < 256 && tid + 256 < first) slice[tid] += slice[tid + 256];
    __syncthreads();
  }
  if constexpr (kBlock >= 256) {
    if (tid < 128 && tid + 128 < first) slice[tid] += slice[tid + 128];
    __syncthreads();
  }
  if constexpr (kBlock >= 128) {
    if (tid < 64 && tid + 64 < first) slice[tid] += slice[tid + 64];
    __syncthreads();
  }
}

template <int kBlock>
__global__ void __launch_bounds__(kBlock) reduce_complete_unroll(int* data, int64_t n, int* partials) {
  const int tid = threadIdx.x;
  const int64_t start = static_cast<int64_t>(blockIdx.x) * kBlock * kDataBlocks;
  int* slice = data + start;
  const int count = values_in_block(n, start, kBlock * kDataBlocks);

  // Step 1: 8 data blocks -> the first one (step 05).
  unroll8_warps::fold_data_blocks<kDataBlocks>(slice, tid, kBlock, count);
  __syncthreads();
  // Step 2: the unrolled tree down to 64 values.
  const int first = min(count, kBlock);
  tree_to_64<kBlock>(slice, tid, first);
  // Step 3: the last warp (step 05).
  if (tid < 32) unroll8_warps::warp_reduce_volatile(slice, tid, first);
  if (tid == 0) partials[blockIdx.x] = slice[0];
}

void launch(int* data, int64_t n, int* partials, const BlockGrid& grid, cudaStream_t stream) {
  reduce_complete_unroll<kThreads><<<grid.blocks, kThreads, 0, stream>>>(data, n, partials);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"reduction/06_complete_unroll", launch, kThreads, kDataBlocks};
LADDER_STEP(kStep);

}  // namespace reduction::complete_unroll
