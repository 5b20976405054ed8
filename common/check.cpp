#include "common/check.h"

#include <sstream>

namespace ladder {

void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  std::ostringstream msg;
  msg << file << ":" << line << ": " << expr << " failed: " << cudaGetErrorName(err) << " ("
      << cudaGetErrorString(err) << ")";
  // A sticky error (a fault inside a kernel) poisons the context; clear nothing, just report.
  throw CudaError(msg.str());
}

void throw_library_error(const char* library, int status, const char* status_name, const char* expr,
                         const char* file, int line) {
  std::ostringstream msg;
  msg << file << ":" << line << ": " << expr << " failed: " << library << " status " << status
      << " (" << status_name << ")";
  throw CudaError(msg.str());
}

}  // namespace ladder
