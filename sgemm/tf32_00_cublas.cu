// sgemm tf32 step 00: cuBLAS on the tensor cores in TF32 — the tf32 series' reference and ceiling.
// cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32: the same fp32 matrices in and out, but every
// product is taken on the tensor cores with its inputs read as TF32 (1 sign, 8 exponent and 10
// mantissa bits: fp32's range, fp16's precision), summed in fp32. On an H100 at 4096^3 that is
// about 7.7 times the rate of step 00_cublas's fp32 FFMAs (the two chapters' tables); the price
// is accuracy: each input carries a relative error of up to 2^-10 instead of 0, so an element's
// error grows from ~K 2^-24 to ~2^-9 of (|A|·|B|)ij (sgemm.cuh derives the bound every tf32 step
// is checked with). The harness runs this same call on
// the same inputs as the ceiling of every tf32 step, in the step's own process; the correctness
// reference stays cuBLAS fp32 (pedantic) plus fp64 CPU rows and columns.
// Changes from 00_cublas: the compute type (and a handle in the default math mode); nothing else.
// Costs: none of ours; cuBLAS picks its own kernel (on sm_90 a TMA + wgmma one) for the shape.
// Source: cuBLAS documentation, cublasGemmEx and cublasComputeType_t.
// Run: build/bin/sgemm_tf32_00_cublas --m 4096 --n 4096 --k 4096
#include "sgemm/sgemm.cuh"

namespace sgemm::tf32_cublas_reference {

void launch(const Gemm& g) { cublas_sgemm_tf32(g); }  // CUBLAS_CHECKs the call

const Step kStep{"sgemm/tf32_00_cublas", launch, nullptr, false, nullptr, nullptr, Math::tf32};
LADDER_STEP(kStep);

}  // namespace sgemm::tf32_cublas_reference
