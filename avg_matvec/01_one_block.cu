// avg_matvec step 01: <<<1, L>>> — one block, one thread per row, the N batches in a loop.
// Thread j averages row j of batch k (M consecutive doubles), then the block computes the L
// elements of out[:, k] one after the other: each thread puts v[j] * W[i][j] into shared memory and
// a tree sweep halves the block until smem[0] holds the dot product (log2 L + 1 barriers per
// element: one before the products are stored, log2 L in the sweep).
// Changes from step 00: the GPU, with the post's first kernel as written, minus its bugs (it
// multiplied by W^T, indexed out with the wrong variable and had no barrier between two sweeps).
// Costs: almost the whole GPU sits idle. One block runs on one SM of 132 (Nsight Compute: "This
// kernel grid is too small to fill the available resources on this device, resulting in only 0.0
// full waves across all SMs", launch__waves_per_multiprocessor), and the N * L * (log2 L + 1)
// barriers run one after another.
// Limit: L <= 1024 (one thread per row, one block) and a power of two (the sweep halves the block);
// another --L is refused in one line, exit 2.
// Source: "【CUDA】Nsight profile驱动的CUDA优化", 2. GPU version1 (gpu_version1).
// Run: build/bin/avg_matvec_01_one_block --L 512 --M 512 --N 1024
#include "avg_matvec/avg_matvec.cuh"

namespace avg_matvec::one_block {

__global__ void average_matvec_one_block(const double* __restrict__ input,
                                         const double* __restrict__ W, double* __restrict__ out,
                                         int L, int64_t M, int64_t N) {
  extern __shared__ double smem[];  // L partial products
  const int j = threadIdx.x;        // the row this thread averages: column j of W
  for (int64_t k = 0; k < N; ++k) {
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
  const int L = static_cast<int>(a.L);  // <= 1024 (BlockOfL::power_of_two)
  average_matvec_one_block<<<1, L, L * sizeof(double), a.stream>>>(a.input, a.W, a.out, L, a.M,
                                                                    a.N);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"avg_matvec/01_one_block", launch, Runs::on_gpu, BlockOfL::power_of_two};
LADDER_STEP(kStep);

}  // namespace avg_matvec::one_block
