// cuBLAS for the references and ceilings of the matrix folders (sgemm, avg_matvec): GEMM in fp32
// and fp64 on row-major matrices, with pedantic math by default — no TF32, no reduced-precision
// tricks, the arithmetic the hand-written fp32/fp64 steps do — or, for the TF32 ladder's ceiling, in
// TF32 (BlasMath::tf32). Linked only by folders that declare `LIBRARIES ladder_blas` in their
// ladder_folder() line.
#pragma once

#include "common/check.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace ladder {

// What a handle's GEMMs may do: pedantic (the references and fp32/fp64 ceilings: no TF32, the
// prescribed precision), or tf32 (sgemm's tf32 series' ceiling: fp32 GEMMs on the tensor cores with
// inputs read as TF32, CUBLAS_COMPUTE_32F_FAST_TF32, fp32 accumulation).
enum class BlasMath { pedantic, tf32 };

// A cuBLAS handle, destroyed with its scope.
class Cublas {
 public:
  explicit Cublas(BlasMath math = BlasMath::pedantic);
  BlasMath math() const { return math_; }
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
  BlasMath math_;
};

// Row-major C (m x n) = alpha * op(A) (m x k) * op(B) (k x n) + beta * C on `stream`.
// op(X) is X or, with trans_x, X^T; lda/ldb/ldc are the row pitches (elements) of the stored
// matrices. cuBLAS is column-major, so this computes C^T = op(B)^T op(A)^T, which is the same
// memory. Sizes and pitches are 64-bit (cuBLAS's _64 API, CUDA 12 and later). The float GEMM runs
// in the handle's BlasMath: cublasSgemm (pedantic) or cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32.
struct GemmShape {
  int64_t m, n, k;
  bool trans_a = false, trans_b = false;
  int64_t lda, ldb, ldc;
};
void gemm_row_major(const Cublas& blas, const GemmShape& s, float alpha, const float* A,
                    const float* B, float beta, float* C, cudaStream_t stream);
void gemm_row_major(const Cublas& blas, const GemmShape& s, double alpha, const double* A,
                    const double* B, double beta, double* C, cudaStream_t stream);

// 2 m n k: one multiply and one add per term of every element.
inline double gemm_flops(int64_t m, int64_t n, int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

}  // namespace ladder
