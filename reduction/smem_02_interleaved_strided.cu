// reduction side ladder "smem", step 02: interleaved addressing without divergence, with bank
// conflicts (Harris, kernel 2).
// Step 01's active lanes are scattered; here thread tid works on index = 2 s tid, so the first
// 128 / s threads of the block are the active ones: whole warps add or idle together.
// The price: a warp's 32 accesses sdata[2 s tid] are 2s words apart. Shared memory has 32 banks of
// 4 bytes (bank = word index % 32), and a warp whose lanes hit one bank with different addresses is
// served one address at a time: at s = 1 lanes tid and tid + 16 share a bank (2-way conflict), at
// s = 2 four lanes do (4-way), at s = 4, 8 and 16 eight do (8-way: 32, 16 and 8 active lanes in 4, 2
// and 1 banks), then 4-way at s = 32 and 2-way at s = 64 as the active lanes run out. ncu counts them:
// l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum.
// Changes from smem_01: index = 2 s tid instead of tid % (2s) == 0.
// Costs: bank conflicts, 2-way at s = 1 growing to 8-way at s = 4 to 16 (see above). On the H100
// they take back what the packing saves: about as many shared-load wavefronts as smem_01, and a
// slower kernel (Harris's 2007 GPU showed a gain; the chapter's smem_02 has the counters).
// Source: M. Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007), reduction #2.
// Run: build/bin/reduction_smem_02_interleaved_strided
#include "reduction/reduction.cuh"

namespace reduction::smem_strided {

constexpr int kThreads = 256;
static_assert(kThreads % 32 == 0 && (kThreads & (kThreads - 1)) == 0, "a power-of-two tree of whole warps");
static_assert(fits_int32_partial(kThreads), "an int32 partial of one slice cannot overflow");

__global__ void reduce_smem_strided(const int* data, int64_t n, int* partials) {
  __shared__ int sdata[kThreads];
  const int tid = threadIdx.x;
  const int64_t start = static_cast<int64_t>(blockIdx.x) * kThreads;
  // Step 1: the slice into shared memory (zeros past the end of the array: they add nothing).
  sdata[tid] = tid < values_in_block(n, start, kThreads) ? data[start + tid] : 0;
  __syncthreads();
  // Step 2: the tree, neighbours first, with the active threads packed at the front.
  for (int s = 1; s < kThreads; s *= 2) {
    const int index = 2 * s * tid;
    if (index < kThreads) sdata[index] += sdata[index + s];
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = sdata[0];
}

void launch(int* data, int64_t n, int* partials, const BlockGrid& grid, cudaStream_t stream) {
  reduce_smem_strided<<<grid.blocks, grid.threads, 0, stream>>>(data, n, partials);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"reduction/smem_02_interleaved_strided", launch, kThreads, 1};
LADDER_STEP(kStep);

}  // namespace reduction::smem_strided
