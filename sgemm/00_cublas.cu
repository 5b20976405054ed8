// sgemm step 00: cuBLAS SGEMM in fp32 — the reference and the ceiling.
// cublasSgemm with CUBLAS_PEDANTIC_MATH: plain fp32 FMAs, no TF32 tensor cores, the arithmetic
// every hand-written step does. cuBLAS is column-major; our matrices are row-major, so the call
// computes Cᵀ = Bᵀ·Aᵀ, which is the same memory (common/blas.h). The harness runs the same call
// on the same inputs as every step's reference and ceiling, in the step's own process.
// Changes from nothing: this is the yardstick; every later step reports its % of this GFLOP/s.
// Costs: none of ours; cuBLAS picks its own kernel (tile shape, split-K) for the shape at hand.
// Source: not in the posts, which check against a CPU loop and their closed form.
// Run: build/bin/sgemm_00_cublas --m 4096 --n 4096 --k 4096
#include "sgemm/sgemm.cuh"

namespace sgemm::cublas_reference {

void launch(const Gemm& g) { cublas_sgemm(g); }  // CUBLAS_CHECKs the call

const Step kStep{"sgemm/00_cublas", launch};
LADDER_STEP(kStep);

}  // namespace sgemm::cublas_reference
