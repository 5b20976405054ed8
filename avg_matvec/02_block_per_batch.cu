// avg_matvec step 02: <<<N, L>>> — one block per batch.
// The kernel of step 01 with its batch loop taken apart: block k does batch k (k = blockIdx.x), so
// the N batches run on every SM at once instead of one after another on a single one.
// Changes from step 01: the grid is N blocks and `for (k ...)` becomes `k = blockIdx.x`.
// Costs: the loads are now what Nsight Compute flags. Thread j reads row j, so at each i a warp
// touches 32 rows M * 8 bytes apart: 32 sectors for 256 useful bytes (l1tex__t_sectors_pipe_lsu_
// mem_global_op_ld.sum / l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum: 20.00 per request on the
// H100 at L = M, the average with the loads of W at 8; the post quotes the same 20 where 8 would
// do), kept useful only while the sectors survive in L1. And each block still runs
// L * (log2 L + 1) barriers.
// Limit: L <= 1024 and a power of two, as step 01 (exit 2 otherwise).
// Source: "【CUDA】Nsight profile驱动的CUDA优化", 3. 增加GridSize (gpu_version2).
// Run: build/bin/avg_matvec_02_block_per_batch --L 512 --M 512 --N 1024
#include "avg_matvec/avg_matvec.cuh"

namespace avg_matvec::block_per_batch {

__global__ void average_matvec_block_per_batch(const double* __restrict__ input,
                                               const double* __restrict__ W,
                                               double* __restrict__ out, int L, int64_t M,
                                               int64_t N) {
  extern __shared__ double smem[];  // L partial products
  const int j = threadIdx.x;        // the row this thread averages: column j of W
  const int64_t k = blockIdx.x;     // the batch this block does
  {                                 // step 01's loop body, unchanged
    // Step 1: the mean of row j of batch k. Neighbouring threads read M doubles apart.
    const double* row = input + (k * L + j) * M;
    double v = 0;
    for (int64_t i = 0; i < M; ++i) v += row[i];
    v /= static_cast<double>(M);

    // Step 2: out[i][k] = sum_j W[i][j] v[j], one shared-memory sweep per output element.
    for (int i = 0; i < L; ++i) {
      __syncthreads();  // the previous sweep's reads of smem are done
      smem[j] = v * W[i * L + j];
      for (int s = blockDim.x >> 1; s > 0; s >>= 1) {
        __syncthreads();
        if (j < s) smem[j] += smem[j + s];
      }
      if (j == 0) out[i * N + k] = smem[0];
    }
  }
}

void launch(const Args& a) {
  // L <= 1024 threads (BlockOfL::power_of_two); N blocks.
  launch_block_per_batch(average_matvec_block_per_batch, a, dim3(static_cast<unsigned>(a.L)));
}

const Step kStep{"avg_matvec/02_block_per_batch", launch, Runs::on_gpu, BlockOfL::power_of_two};
LADDER_STEP(kStep);

}  // namespace avg_matvec::block_per_batch
