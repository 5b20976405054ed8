#include "common/buffers.h"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace ladder {
namespace {

size_t meminfo_kb(const char* key) {
  std::ifstream f("/proc/meminfo");
  std::string k;
  size_t v = 0;
  std::string unit;
  while (f >> k >> v >> unit)
    if (k == key) return v * 1024;
  return 0;
}

constexpr size_t kDeviceMargin = size_t(256) << 20;

}  // namespace

size_t host_bytes_available() { return meminfo_kb("MemAvailable:"); }
size_t host_bytes_total() { return meminfo_kb("MemTotal:"); }

std::string format_bytes(size_t bytes) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.2f GB (%zu bytes)", static_cast<double>(bytes) / 1e9, bytes);
  return buf;
}

void require_memory(const MemoryNeeds& n, const std::string& what) {
  size_t dev_free = 0, dev_total = 0;
  if (n.device + n.managed > 0) CUDA_CHECK(cudaMemGetInfo(&dev_free, &dev_total));
  size_t dev_need = n.device + n.managed;
  if (dev_need > 0 && dev_need + kDeviceMargin > dev_free)
    throw CudaError(what + " needs " + format_bytes(dev_need) + " of device memory, " +
                    format_bytes(dev_free) + " free");

  size_t host_need = n.host + n.pinned + n.managed;
  size_t avail = host_bytes_available();
  if (host_need > 0 && avail > 0 && host_need > avail - avail / 10)
    throw CudaError(what + " needs " + format_bytes(host_need) + " of host memory, " +
                    format_bytes(avail) + " available");
  size_t total = host_bytes_total();
  if (n.pinned > 0 && total > 0 && n.pinned > total / 2)
    throw CudaError(what + " needs " + format_bytes(n.pinned) +
                    " of pinned host memory, more than half of the host's " + format_bytes(total));
}

void* device_allocate(size_t bytes) {
  void* p = nullptr;
  cudaError_t err = cudaMalloc(&p, bytes);
  if (err != cudaSuccess) {
    cudaGetLastError();  // an allocation failure is not sticky: clear it
    throw CudaError("cudaMalloc of " + format_bytes(bytes) + " failed: " + cudaGetErrorString(err));
  }
  return p;
}

void* host_allocate(size_t bytes, HostKind kind) {
  void* p = nullptr;
  cudaError_t err = cudaSuccess;
  const char* call = "";
  switch (kind) {
    case HostKind::pageable:
      p = std::malloc(bytes);
      if (!p) throw CudaError("malloc of " + format_bytes(bytes) + " failed");
      return p;
    case HostKind::pinned:
      call = "cudaMallocHost";
      err = cudaMallocHost(&p, bytes);
      break;
    case HostKind::mapped:
      call = "cudaHostAlloc(cudaHostAllocMapped)";
      err = cudaHostAlloc(&p, bytes, cudaHostAllocMapped);
      break;
    case HostKind::managed:
      call = "cudaMallocManaged";
      err = cudaMallocManaged(&p, bytes);
      break;
  }
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw CudaError(std::string(call) + " of " + format_bytes(bytes) +
                    " failed: " + cudaGetErrorString(err));
  }
  return p;
}

void host_release(void* p, HostKind kind) {
  switch (kind) {
    case HostKind::pageable: std::free(p); break;
    case HostKind::pinned:
    case HostKind::mapped: cudaFreeHost(p); break;
    case HostKind::managed: cudaFree(p); break;
  }
}

}  // namespace ladder
