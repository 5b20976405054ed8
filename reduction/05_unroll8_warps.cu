// reduction step 05: eight data blocks per thread block, and the last warp unrolled.
// Step 1: every thread loads one value from each of 8 data blocks — 8 independent loads in flight
// before the first add — and leaves their sum in the first data block. Step 2: the interleaved tree
// with barriers, but only while more than 64 values remain. Step 3: the last 64 -> 1 by warp 0
// alone, unrolled: within one warp no __syncthreads is needed, because only warp 0's own lanes
// read and write those 64 values.
// The post's last warp is `vmem[tid] += vmem[tid + 16];` etc. through a volatile pointer and
// nothing else. volatile makes the compiler emit a real load and store for every access (no value
// kept in a register between the lines), but it orders nothing between lanes. The post relies on
// the warp executing each line in lockstep, all loads before all stores. Since Volta (independent
// thread scheduling) lanes of a warp may run apart: lane 0 may read vmem[16] after lane 16 has
// already added vmem[32] into it, and the sum is wrong (compute-sanitizer racecheck flags these
// lines in shared memory). The fix keeps the lesson: each lane reads its partner into a register,
// __syncwarp() (all reads done), writes its own slot, __syncwarp() (all writes visible).
// Changes from step 04: 8 data blocks instead of 2 (an eighth of the blocks); the last 6 passes
// without __syncthreads.
// Costs: a block now covers 4096 values, so 2^28 values give only 65,536 blocks (still ~500 per
// SM); the in-place tree still moves every partial through the memory hierarchy.
// Source: "【CUDA】Branch Divergence and Unrolling Loop", 二、UNrolling Loops, reduceUnrollWarps8.
// Run: build/bin/reduction_05_unroll8_warps
#include "reduction/reduction.cuh"

namespace reduction::unroll8_warps {

constexpr int kThreads = 512;
constexpr int kDataBlocks = 8;
static_assert(kThreads >= 64, "the last warp starts from 64 values");
static_assert(kThreads % 32 == 0 && (kThreads & (kThreads - 1)) == 0, "a power-of-two tree of whole warps");
static_assert(fits_int32_partial(kThreads * kDataBlocks), "an int32 partial of one slice cannot overflow");

// Step 1 of steps 05-07: thread tid adds slice[tid + j*threads] for j < kBlocks into slice[tid].
// Full slices load all kBlocks values unconditionally, so all loads are in flight at once; only
// the last block of an n that is not a multiple of the slice takes the guarded path.
template <int kBlocks>
__device__ __forceinline__ void fold_data_blocks(int* slice, int tid, int threads, int count) {
  if (count == kBlocks * threads) {
    int v[kBlocks];
#pragma unroll
    for (int j = 0; j < kBlocks; ++j) v[j] = slice[tid + j * threads];
    int sum = 0;
#pragma unroll
    for (int j = 0; j < kBlocks; ++j) sum += v[j];
    slice[tid] = sum;
  } else if (tid < count) {
    int sum = 0;
#pragma unroll
    for (int j = 0; j < kBlocks; ++j)
      if (tid + j * threads < count) sum += slice[tid + j * threads];
    slice[tid] = sum;
  }
}

// Step 3 of steps 05-06: warp 0 reduces slice[0 .. min(count, 64)) into slice[0], no block barrier.
// Lanes >= offset compute values that never reach slice[0]; they are kept busy so that every lane
// reaches each __syncwarp() (all 32 lanes must, with the full mask).
__device__ __forceinline__ void warp_reduce_volatile(volatile int* slice, int lane, int count) {
  int sum = lane < count ? slice[lane] : 0;
#pragma unroll
  for (int offset = 32; offset > 0; offset >>= 1) {
    if (lane + offset < count) sum += slice[lane + offset];
    __syncwarp();  // every lane has read its partner before any lane overwrites a slot
    if (lane < count) slice[lane] = sum;
    __syncwarp();  // every write is visible before the next offset's reads
  }
}

__global__ void reduce_unroll8_warps(int* data, int64_t n, int* partials) {
  const int tid = threadIdx.x;
  const int64_t start = static_cast<int64_t>(blockIdx.x) * blockDim.x * kDataBlocks;
  int* slice = data + start;
  const int count = values_in_block(n, start, kDataBlocks * blockDim.x);

  // Step 1: 8 data blocks -> the first one, 8 loads in flight per thread.
  fold_data_blocks<kDataBlocks>(slice, tid, blockDim.x, count);
  __syncthreads();

  // Step 2: the interleaved tree with barriers down to 64 values.
  const int first = min(count, static_cast<int>(blockDim.x));
  for (int stride = blockDim.x / 2; stride > 32; stride >>= 1) {
    if (tid < stride && tid + stride < first) slice[tid] += slice[tid + stride];
    __syncthreads();
  }

  // Step 3: the last warp, unrolled.
  if (tid < 32) warp_reduce_volatile(slice, tid, first);
  if (tid == 0) partials[blockIdx.x] = slice[0];
}

void launch(int* data, int64_t n, int* partials, const BlockGrid& grid, cudaStream_t stream) {
  reduce_unroll8_warps<<<grid.blocks, grid.threads, 0, stream>>>(data, n, partials);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"reduction/05_unroll8_warps", launch, kThreads, kDataBlocks};
LADDER_STEP(kStep);

}  // namespace reduction::unroll8_warps
