// avg_matvec step 03: a warp per row for the averaging — coalesced loads, a shuffle to add up.
// The block is (32, L/32): warp y averages rows y, y + L/32, ..., its 32 lanes reading 32
// consecutive doubles of the row per load (a warp-stride loop), then five __shfl_down_sync add the
// 32 lane sums and lane 0 stores the mean in shared memory, where step 02's mat-vec finds it.
// Changes from step 02: Step 1 (the loads go from one row per lane to one row per warp: 8 sectors
// per request, the optimum for 8-byte loads — l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum /
// l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum), and a sweep that starts at the largest power
// of two below L and guards its upper half, so any multiple of 32 works.
// Costs: the averaging is no longer the problem; Step 2 is. Per batch the block still runs
// L * (log2 L + 1) barriers, each waiting for the slowest of L/32 warps, with most of the block
// idle in the late rounds of each sweep, and each sweep starts with a load of W[i][j] that must
// land before its first barrier: L global-load latencies per batch, one behind the other. Warp
// State Statistics (NVIDIA H100 80GB HBM3, CUDA 13.0, 2026-11-22, N = 64): long-scoreboard stalls lead,
// 5.55 per issue (smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio, the
// loads of W among them), against 1.60 at a barrier
// (smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio).
// Limit: L <= 1024 and a multiple of 32 (whole warps, one thread per column of W in Step 2); exit 2
// otherwise.
// Source: "【CUDA】Nsight profile驱动的CUDA优化", 4. Shuffle warp (gpu_version3).
// Run: build/bin/avg_matvec_03_warp_average --L 512 --M 512 --N 1024
#include "avg_matvec/avg_matvec.cuh"

namespace avg_matvec::warp_average {

// Step 1 of steps 03 and 04: warp y of the (32, L/32) block averages rows y, y + L/32, ... of
// batch k into means[row]; lane t reads elements t, t + 32, ... of a row, then the shuffles add.
__device__ __forceinline__ void warp_means(const double* __restrict__ input, double* means, int L,
                                           int64_t M, int64_t k) {
  const int lane = threadIdx.x;
  for (int row = threadIdx.y; row < L; row += blockDim.y) {
    const double* x = input + (k * L + row) * M;
    double sum = 0;
    for (int64_t i = lane; i < M; i += 32) sum += x[i];
    sum = warp_sum(sum);
    if (lane == 0) means[row] = sum / static_cast<double>(M);
  }
}

__global__ void average_matvec_warp_average(const double* __restrict__ input,
                                            const double* __restrict__ W, double* __restrict__ out,
                                            int L, int64_t M, int64_t N) {
  extern __shared__ double smem[];  // the L means, then L partial products
  const int j = threadIdx.y * 32 + threadIdx.x;  // blockDim (32, L/32): column j of W in Step 2
  const int64_t k = blockIdx.x;     // the batch this block does

  // Step 1: a warp per row, coalesced.
  warp_means(input, smem, L, M, k);
  __syncthreads();  // all L means are in smem
  const double v = smem[j];

  // Step 2: out[i][k] = sum_j W[i][j] v[j], one shared-memory sweep per output element.
  const int first = 1 << (31 - __clz(L - 1));  // the largest power of two below L
  for (int i = 0; i < L; ++i) {
    __syncthreads();  // the previous sweep's reads of smem are done
    smem[j] = v * W[i * L + j];
    for (int s = first; s > 0; s >>= 1) {
      __syncthreads();
      if (j < s && j + s < L) smem[j] += smem[j + s];
    }
    if (j == 0) out[i * N + k] = smem[0];
  }
}

void launch(const Args& a) {
  // L <= 1024, a multiple of 32 (BlockOfL::whole_warps): (32, L/32) threads; N blocks.
  launch_block_per_batch(average_matvec_warp_average, a, dim3(32, static_cast<unsigned>(a.L / 32)));
}

const Step kStep{"avg_matvec/03_warp_average", launch, Runs::on_gpu, BlockOfL::whole_warps};
LADDER_STEP(kStep);

}  // namespace avg_matvec::warp_average
