// reduction step 08: one pass over the input with 16-byte loads, finished on the device.
// Steps 01-07 write partial sums back into the input and let the host add the blocks. Here the
// input is only read: a grid of just enough blocks to fill the GPU (SMs x (threads per SM / 256)
// blocks of 256, read off the device: 132 x 8 on an H100) strides over it, each thread
// accumulating in a register and asking for kUnroll 16-byte int4 loads per trip before it adds
// them. That is the source; the machine code differs (cuobjdump -sass
// build/bin/reduction_08_grid_stride_int4): nvcc unrolls the loop 4 times (16 int4 loads a pass),
// uses 32 registers and interleaves the loads with the adds, issuing 3 before the first add
// (48 bytes per thread, 96 KiB per SM) and keeping 1-2 pending at each later wait. Each block
// reduces its threads with warp shuffles (step 07) and one shared-memory hop, writes one int64,
// and the last block to finish (an atomic counter with acquire/release ordering) adds those ~1000
// partials and writes the total. One kernel, no second pass, no host loop, no input restore.
// Changes from step 07: not in place; grid-stride instead of one slice per block; int4 loads;
// int64 block partials (a block's share grows with n, so int32 could overflow); the finish moved
// from the host into the last block.
// Costs: the input must be 16-byte aligned (cudaMalloc gives 256; the launcher refuses another with
// an error, exit 2); the last n % 4 values take a scalar path; the last block makes one more pass,
// over the grid's ~1000 int64 partials, after every other block has finished.
// Source: beyond the posts; the grid-stride loop of "CUDA编程入门" and the shuffle of
// "【CUDA】Nsight profile驱动的CUDA优化", 4. Shuffle warp.
// Run: build/bin/reduction_08_grid_stride_int4
#include "07_warp_shuffle.cu"  // warp_sum

#include <cuda/atomic>

#include <algorithm>
#include <cstdint>

namespace reduction::grid_stride_int4 {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;  // int4 loads per thread per iteration (the SASS keeps <= 3 in flight)
static_assert(kThreads % 32 == 0 && kThreads / 32 <= 32, "one warp reduces the warp sums");
static_assert(fits_int32_partial(4 * kUnroll), "one iteration's 4*kUnroll values add up in int32");

// The block's sum in thread 0. Uses `warp_sums`; a second call needs a __syncthreads() before it.
__device__ __forceinline__ int64_t block_sum(int64_t v, int64_t* warp_sums) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_shuffle::warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kThreads / 32 ? warp_sums[lane] : 0;
    v = warp_shuffle::warp_sum(v);
  }
  return v;
}

// block_partials[gridDim.x] and blocks_done live in the harness's workspace, zeroed once; the last
// block sets blocks_done back to 0, so every launch finds it zeroed.
__global__ void __launch_bounds__(kThreads)
reduce_grid_stride_int4(const int* __restrict__ data, int64_t n, int64_t* block_partials,
                        unsigned* blocks_done, int64_t* total) {
  __shared__ int64_t warp_sums[kThreads / 32];
  __shared__ bool is_last;
  const int4* data4 = reinterpret_cast<const int4*>(data);
  const int64_t n4 = n / 4;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;

  // Step 1: grid-stride over int4s, kUnroll independent 16-byte loads per trip (nvcc interleaves
  // them with the adds: see the header).
  int64_t sum = 0;
  for (int64_t i = first; i < n4; i += kUnroll * stride) {
    int4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      v[u] = i + u * stride < n4 ? data4[i + u * stride] : make_int4(0, 0, 0, 0);
    int s = 0;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) s += v[u].x + v[u].y + v[u].z + v[u].w;
    sum += s;
  }
  if (first < n - 4 * n4) sum += data[4 * n4 + first];  // the last n % 4 values

  // Step 2: the block's sum -> block_partials[blockIdx.x]; count the finished blocks.
  sum = block_sum(sum, warp_sums);
  if (threadIdx.x == 0) {
    block_partials[blockIdx.x] = sum;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> done(*blocks_done);
    // release: our partial is visible before the count; acquire: the last block sees all partials
    is_last = done.fetch_add(1, cuda::memory_order_acq_rel) == gridDim.x - 1;
  }
  __syncthreads();

  // Step 3: the last block adds the partials and leaves the counter zeroed for the next launch.
  if (is_last) {
    int64_t s = 0;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += kThreads) s += block_partials[b];
    s = block_sum(s, warp_sums);
    if (threadIdx.x == 0) {
      *total = s;
      *blocks_done = 0;
    }
  }
}

int grid_for(const ladder::DeviceInfo& dev, int64_t n) {
  const int64_t wanted = std::max<int64_t>(1, (n / 4 + kThreads - 1) / kThreads);  // no idle blocks
  return static_cast<int>(std::min<int64_t>(ladder::resident_blocks(dev, kThreads), wanted));
}

// block_partials first (8-byte aligned at the workspace's start), then the counter.
size_t workspace_bytes(const ladder::DeviceInfo& dev, int64_t n) {
  return sizeof(int64_t) * grid_for(dev, n) + sizeof(unsigned);
}

void launch(const ladder::DeviceInfo& dev, const int* data, int64_t n, int64_t* total, Workspace ws,
            cudaStream_t stream) {
  if (!ladder::aligned16(data))
    throw ladder::UsageError("08_grid_stride_int4 needs a 16-byte aligned input");
  const int blocks = grid_for(dev, n);
  auto* block_partials = static_cast<int64_t*>(ws.ptr);
  auto* blocks_done = reinterpret_cast<unsigned*>(block_partials + blocks);
  reduce_grid_stride_int4<<<blocks, kThreads, 0, stream>>>(data, n, block_partials, blocks_done, total);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"reduction/08_grid_stride_int4", /*partials=*/nullptr, 0, 0, launch, workspace_bytes};
LADDER_STEP(kStep);

}  // namespace reduction::grid_stride_int4
