// avg_matvec step 04: a warp per output element for the mat-vec too — no sweep, one barrier.
// Step 1 is step 03's. Then warp y computes out[i][k] for rows i = y, y + L/32, ... of W: its lanes
// read 32 consecutive doubles of row i of W per load (coalesced), multiply them by the means in
// shared memory and add the 32 lane sums with the same five shuffles. No shared-memory partial
// products and no barrier after the means are in place: every warp runs on its own.
// Changes from step 03: Step 2 (L sweeps of log2 L + 1 barriers each -> one barrier per batch).
// Costs: now the matrix is the cost. Every block reads all of W (L * L * 8 bytes, 2 MiB at L = 512)
// for one batch: N times the same 2 MiB, as many bytes as the input itself at L = M, served by L1
// and L2 (Nsight Compute, H100, CUDA 13.0, 2026-11-26, the default size: of the 4.29 GB loaded
// through L1, l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum, half W, 2.94 GB came from L2,
// lts__t_sectors_srcunit_tex_op_read.sum: the input's 2.15 GB and only 0.79 GB of W), and L * L
// FMAs per 8 * L * M bytes read. The N mat-vecs share W: that is a matrix product.
// Limit: L <= 1024 and a multiple of 32, as step 03 (exit 2 otherwise).
// Source: beyond the post, which stops at step 03; the shuffle is its section 4.
// Run: build/bin/avg_matvec_04_warp_matvec --L 512 --M 512 --N 1024
#include "03_warp_average.cu"  // warp_means, Step 1 unchanged

namespace avg_matvec::warp_matvec {

__global__ void average_matvec_warp_matvec(const double* __restrict__ input,
                                           const double* __restrict__ W, double* __restrict__ out,
                                           int L, int64_t M, int64_t N) {
  extern __shared__ double smem[];  // the L means
  const int lane = threadIdx.x;     // blockDim (32, L/32)
  const int64_t k = blockIdx.x;     // the batch this block does

  // Step 1: a warp per row, coalesced (step 03).
  warp_average::warp_means(input, smem, L, M, k);
  __syncthreads();  // all L means are in smem

  // Step 2: warp y computes out[i][k] = W[i] · v for rows i = y, y + L/32, ...; lane t takes
  // columns t, t + 32, ... and the shuffles add the lanes.
  for (int i = threadIdx.y; i < L; i += blockDim.y) {
    double dot = 0;
    for (int c = lane; c < L; c += 32) dot += W[i * L + c] * smem[c];
    dot = warp_sum(dot);
    if (lane == 0) out[i * N + k] = dot;
  }
}

void launch(const Args& a) {
  // L <= 1024, a multiple of 32 (BlockOfL::whole_warps): (32, L/32) threads; N blocks.
  launch_block_per_batch(average_matvec_warp_matvec, a, dim3(32, static_cast<unsigned>(a.L / 32)));
}

const Step kStep{"avg_matvec/04_warp_matvec", launch, Runs::on_gpu, BlockOfL::whole_warps};
LADDER_STEP(kStep);

}  // namespace avg_matvec::warp_matvec
