// reduction step 07: __shfl_down_sync for the last warp instead of memory.
// Warp 0 takes its 64 values into registers (two per lane, added), then five shuffles:
// sum += __shfl_down_sync(0xffffffff, sum, offset) for offset 16, 8, 4, 2, 1. A shuffle moves a
// register from lane + offset to lane inside the warp: no loads, no stores, no volatile, and no
// __syncwarp, because the _sync shuffle itself names the lanes that take part (the full mask) and
// exchanges their values in one step — the race of step 05 cannot happen.
// Changes from step 06: the last six passes (64 -> 1) read memory once and shuffle; lane 0 writes
// the partial straight from its register.
// Costs: all 32 lanes must execute each shuffle (hence no `if (tid < stride)` inside the warp);
// the steps 01-06 tree above the last warp is unchanged, in place in global memory.
// Source: "【CUDA】Nsight profile驱动的CUDA优化", 4. Shuffle warp (__shfl_down_sync in gpu_version3).
// Run: build/bin/reduction_07_warp_shuffle
#include "06_complete_unroll.cu"  // fold_data_blocks, tree_to_64

namespace reduction::warp_shuffle {

constexpr int kThreads = 512;
constexpr int kDataBlocks = 8;
static_assert(kThreads >= 64 && (kThreads & (kThreads - 1)) == 0, "a power-of-two tree down to 64");
static_assert(fits_int32_partial(kThreads * kDataBlocks), "an int32 partial of one slice cannot overflow");

// The sum of `v` over the 32 lanes of a full warp, in lane 0 (steps 07-08).
template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

template <int kBlock>
__global__ void __launch_bounds__(kBlock) reduce_warp_shuffle(int* data, int64_t n, int* partials) {
  const int tid = threadIdx.x;
  const int64_t start = static_cast<int64_t>(blockIdx.x) * kBlock * kDataBlocks;
  int* slice = data + start;
  const int count = values_in_block(n, start, kBlock * kDataBlocks);

  // Steps 1-2 as step 06: 8 data blocks -> 512 values -> 64 values, in place.
  unroll8_warps::fold_data_blocks<kDataBlocks>(slice, tid, kBlock, count);
  __syncthreads();
  const int first = min(count, kBlock);
  complete_unroll::tree_to_64<kBlock>(slice, tid, first);

  // Step 3: the last warp in registers.
  if (tid < 32) {
    int sum = tid < first ? slice[tid] : 0;
    if (tid + 32 < first) sum += slice[tid + 32];
    sum = warp_sum(sum);
    if (tid == 0) partials[blockIdx.x] = sum;
  }
}

void launch(int* data, int64_t n, int* partials, const BlockGrid& grid, cudaStream_t stream) {
  reduce_warp_shuffle<kThreads><<<grid.blocks, kThreads, 0, stream>>>(data, n, partials);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"reduction/07_warp_shuffle", launch, kThreads, kDataBlocks};
LADDER_STEP(kStep);

}  // namespace reduction::warp_shuffle
