#include "common/blas.h"

#include <climits>
#include <string>

namespace ladder {

Cublas::Cublas() {
  CUBLAS_CHECK(cublasCreate(&h_));
  CUBLAS_CHECK(cublasSetMathMode(h_, CUBLAS_PEDANTIC_MATH));
}

Cublas::~Cublas() {
  if (h_) cublasDestroy(h_);
}

namespace {

int as_int(int64_t v, const char* what) {
  if (v < 0 || v > INT_MAX)
    throw UsageError(std::string("cuBLAS takes ") + what + " up to 2^31 - 1, got " + std::to_string(v));
  return static_cast<int>(v);
}

template <typename T, typename Fn>
void gemm(const Cublas& blas, const GemmShape& s, T alpha, const T* A, const T* B, T beta, T* C,
          cudaStream_t stream, Fn cublas_gemm) {
  CUBLAS_CHECK(cublasSetStream(blas.get(), stream));
  // Column-major view: C^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m).
  CUBLAS_CHECK(cublas_gemm(blas.get(), s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                           s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, as_int(s.n, "n"), as_int(s.m, "m"),
                           as_int(s.k, "k"), &alpha, B, as_int(s.ldb, "ldb"), A, as_int(s.lda, "lda"),
                           &beta, C, as_int(s.ldc, "ldc")));
}

}  // namespace

void gemm_row_major(const Cublas& blas, const GemmShape& s, float alpha, const float* A,
                    const float* B, float beta, float* C, cudaStream_t stream) {
  gemm(blas, s, alpha, A, B, beta, C, stream, cublasSgemm);
}

void gemm_row_major(const Cublas& blas, const GemmShape& s, double alpha, const double* A,
                    const double* B, double beta, double* C, cudaStream_t stream) {
  gemm(blas, s, alpha, A, B, beta, C, stream, cublasDgemm);
}

}  // namespace ladder
