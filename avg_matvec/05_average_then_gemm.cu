// avg_matvec step 05: an averaging kernel, then ONE cuBLAS DGEMM for all N mat-vecs.
// The N mat-vecs W · v[k] are the columns of one matrix product: out (L x N) = W (L x L) · V^T,
// with V (N x L) the means, V[k][j] = v[k][j]. So the work splits in two launches on the stream:
//   1. average_rows: a warp per row of the whole input (N * L rows), the warp-stride loop and the
//      shuffle of step 03's Step 1, writing V to device memory (N * L * 8 bytes, 1/M of the input);
//   2. cublasDgemm (common/blas.h, pedantic math: IEEE fp64 throughout), which keeps tiles of W
//      and V on chip and reuses each element many times instead of re-reading W once per batch.
// Changes from step 04: two kernels instead of one; no block-per-batch structure, so no limit on L.
// Why faster: the GEMM does the 2 * L * L * N flops at a fraction of the time step 04's mat-vec
// spent loading W once per batch (from L1 and L2), and the averaging kernel no longer waits on the
// mat-vec of its batch.
// Costs: V's round trip (write, then read by the GEMM: 2/M of the input's bytes) and a second
// launch. What is left is the averaging kernel's own bandwidth (dram__throughput.avg.pct_of_peak_
// sustained_elapsed): 8-byte loads, at most four per lane in flight (nvcc unrolls the warp-stride
// loop 16 times and keeps four loads ahead of the adds: cuobjdump -sass
// build/bin/avg_matvec_05_average_then_gemm), and one short-lived block per 8 rows.
// Source: beyond the post, which stops at step 03.
// Run: build/bin/avg_matvec_05_average_then_gemm --L 512 --M 512 --N 1024
#include "avg_matvec/avg_matvec.cuh"

namespace avg_matvec::average_then_gemm {

constexpr int kWarps = 8;  // warps per block, one row each
static_assert(kWarps * 32 <= 1024, "a block holds at most 1024 threads");

// averages[r] = the mean of input row r (M doubles at input + r * M), r < rows = N * L.
__global__ void __launch_bounds__(kWarps * 32)
    average_rows(const double* __restrict__ input, double* __restrict__ averages, int64_t rows,
                 int64_t M) {
  const int lane = threadIdx.x % 32;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kWarps;
  // One row per warp; the loop only matters past 2^31 - 1 blocks. `r` is the same for the whole
  // warp, so every lane reaches the shuffles.
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; r < rows;
       r += stride) {
    const double* x = input + r * M;
    double sum = 0;
    for (int64_t i = lane; i < M; i += 32) sum += x[i];
    sum = warp_sum(sum);
    if (lane == 0) averages[r] = sum / static_cast<double>(M);
  }
}

// out (L x N, row pitch N) = W (L x L) · V^T, V = averages (N x L, row pitch L): the N mat-vecs.
void matvecs_as_gemm(const Args& a) {
  const ladder::GemmShape shape{/*m=*/a.L,          /*n=*/a.N,         /*k=*/a.L,
                                /*trans_a=*/false, /*trans_b=*/true,
                                /*lda=*/a.L,       /*ldb=*/a.L,       /*ldc=*/a.N};
  ladder::gemm_row_major(*a.blas, shape, 1.0, a.W, a.averages, 0.0, a.out, a.stream);
}

void launch(const Args& a) {
  const int64_t rows = a.N * a.L;
  const int64_t blocks = std::min((rows + kWarps - 1) / kWarps, kMaxGridX);
  average_rows<<<static_cast<unsigned>(blocks), kWarps * 32, 0, a.stream>>>(a.input, a.averages,
                                                                              rows, a.M);
  CUDA_CHECK_LAUNCH();
  matvecs_as_gemm(a);
}

const Step kStep{"avg_matvec/05_average_then_gemm", launch, Runs::on_gpu, BlockOfL::any,
                 /*gemm=*/true};
LADDER_STEP(kStep);

}  // namespace avg_matvec::average_then_gemm
