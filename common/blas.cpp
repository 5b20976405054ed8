#include "common/blas.h"

namespace ladder {

Cublas::Cublas(BlasMath math) : math_(math) {
  CUBLAS_CHECK(cublasCreate(&h_));
  if (math == BlasMath::pedantic) CUBLAS_CHECK(cublasSetMathMode(h_, CUBLAS_PEDANTIC_MATH));
}

Cublas::~Cublas() {
  if (h_) cublasDestroy(h_);
}

namespace {

template <typename T, typename Fn>
void gemm(const Cublas& blas, const GemmShape& s, T alpha, const T* A, const T* B, T beta, T* C,
          cudaStream_t stream, Fn cublas_gemm) {
  CUBLAS_CHECK(cublasSetStream(blas.get(), stream));
  // Column-major view: C^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m). The _64 entry points take
  // 64-bit sizes and pitches (a row pitch of N > 2^31 - 1 is legal: avg_matvec's out).
  CUBLAS_CHECK(cublas_gemm(blas.get(), s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                           s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, s.n, s.m, s.k, &alpha, B, s.ldb, A,
                           s.lda, &beta, C, s.ldc));
}

// cublasGemmEx in fp32 with TF32 compute, in cublasSgemm_64's argument order.
cublasStatus_t sgemm_tf32(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                          int64_t n, int64_t k, const float* alpha, const float* A, int64_t lda,
                          const float* B, int64_t ldb, const float* beta, float* C, int64_t ldc) {
  return cublasGemmEx_64(h, ta, tb, m, n, k, alpha, A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb, beta, C,
                         CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
}

}  // namespace

void gemm_row_major(const Cublas& blas, const GemmShape& s, float alpha, const float* A,
                    const float* B, float beta, float* C, cudaStream_t stream) {
  if (blas.math() == BlasMath::tf32) gemm(blas, s, alpha, A, B, beta, C, stream, sgemm_tf32);
  else gemm(blas, s, alpha, A, B, beta, C, stream, cublasSgemm_64);
}

void gemm_row_major(const Cublas& blas, const GemmShape& s, double alpha, const double* A,
                    const double* B, double beta, double* C, cudaStream_t stream) {
  gemm(blas, s, alpha, A, B, beta, C, stream, cublasDgemm_64);
}

}  // namespace ladder
