// Error handling shared by every step: one macro per library that names the failing call, and the
// exceptions that main() turns into the documented exit codes (docs/contract.md, "Exit codes"):
// 2 bad usage, 3 CUDA or library error, 77 no usable CUDA device.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace ladder {

enum ExitCode : int {
  kExitOk = 0,
  kExitVerifyFailed = 1,
  kExitUsage = 2,
  kExitCudaError = 3,
  kExitNoDevice = 77,
};

// Bad flags, bad numbers, sizes a step does not support. Exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// What this GPU (or device profile) cannot run: an architecture older than the step's declared
// requirement, more shared memory per block than it has, no code for it in the executable. Exit 2
// with one line, "unsupported: ..." and no usage (docs/contract.md, "When a GPU cannot run a step").
struct UnsupportedError : UsageError {
  using UsageError::UsageError;
};
// A CUDA, cuBLAS or resource failure (out of memory included). Exit 3.
struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// No driver or no device. Exit 77, which ctest reports as skipped.
struct NoDeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line);
[[noreturn]] void throw_library_error(const char* library, int status, const char* status_name,
                                      const char* expr, const char* file, int line);

}  // namespace ladder

// Wrap every runtime call: CUDA_CHECK(cudaMalloc(&p, bytes));
#define CUDA_CHECK(expr)                                                     \
  do {                                                                       \
    cudaError_t ladder_err_ = (expr);                                        \
    if (ladder_err_ != cudaSuccess)                                          \
      ::ladder::throw_cuda_error(ladder_err_, #expr, __FILE__, __LINE__);    \
  } while (0)

// After every <<<...>>>: catches bad launch configurations at once. Asynchronous faults inside the
// kernel surface at the next synchronizing CUDA_CHECK, which names that call.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

// cuBLAS: CUBLAS_CHECK(cublasSgemm(...)); defined here so that only files that include cublas_v2.h pay.
#define CUBLAS_CHECK(expr)                                                                  \
  do {                                                                                      \
    cublasStatus_t ladder_status_ = (expr);                                                 \
    if (ladder_status_ != CUBLAS_STATUS_SUCCESS)                                            \
      ::ladder::throw_library_error("cuBLAS", static_cast<int>(ladder_status_),             \
                                    cublasGetStatusName(ladder_status_), #expr, __FILE__,   \
                                    __LINE__);                                              \
  } while (0)
