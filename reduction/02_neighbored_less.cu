// reduction step 02: neighbored pairs with packed active threads, index = 2*stride*tid.
// The same pairs as step 01 are added, but thread tid now handles the pair at index 2*stride*tid,
// so the active threads are tid = 0 .. blockDim/(2*stride) - 1: consecutive, whole warps. In pass 1
// warps 0-7 of 16 work and warps 8-15 skip the branch entirely; in pass 2 warps 0-3 work, and so on.
// Divergence is left only in the last 5 passes, where fewer than 32 threads remain.
// Changes from step 01: the index computation; no %.
// Costs: the addresses: thread tid touches index 2*stride*tid, so a warp's 32 accesses are
// 2*stride*4 bytes apart and, once stride >= 4, every access is its own 32-byte sector (the same
// pattern in shared memory is a bank conflict of up to 2*stride ways: smem_02). Step 03 fixes the
// addresses.
// Source: "【CUDA】Branch Divergence and Unrolling Loop", 1.2 并行规约中的发散, reduceNeighboredLess.
// Run: build/bin/reduction_02_neighbored_less
#include "reduction/reduction.cuh"

namespace reduction::neighbored_less {

constexpr int kThreads = 512;
static_assert(kThreads % 32 == 0 && (kThreads & (kThreads - 1)) == 0, "a power-of-two tree of whole warps");
static_assert(fits_int32_partial(kThreads), "an int32 partial of one slice cannot overflow");

__global__ void reduce_neighbored_less(int* data, int64_t n, int* partials) {
  const int tid = threadIdx.x;
  const int64_t start = static_cast<int64_t>(blockIdx.x) * blockDim.x;
  int* slice = data + start;
  const int count = values_in_block(n, start, blockDim.x);
  for (int stride = 1; stride < blockDim.x; stride *= 2) {
    const int index = 2 * stride * tid;  // active threads: tid < blockDim / (2*stride), packed
    if (index < blockDim.x && index + stride < count) slice[index] += slice[index + stride];
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = slice[0];
}

void launch(int* data, int64_t n, int* partials, const BlockGrid& grid, cudaStream_t stream) {
  reduce_neighbored_less<<<grid.blocks, grid.threads, 0, stream>>>(data, n, partials);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"reduction/02_neighbored_less", launch, kThreads, 1};
LADDER_STEP(kStep);

}  // namespace reduction::neighbored_less
