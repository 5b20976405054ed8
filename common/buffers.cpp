#include "common/buffers.h"

#include "common/cli.h"
#include "common/device.h"

#include <algorithm>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
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

namespace {

[[noreturn]] void throw_too_large(long double count, size_t elem) {
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "a buffer of %.4Lg elements of %zu bytes needs %.4Lg bytes, more than any machine has "
                "(the limit is 2^60 bytes)",
                count, elem, count * static_cast<long double>(elem));
  throw CudaError(buf);
}

}  // namespace

size_t checked_bytes(int64_t count, size_t elem) {
  if (count < 0) throw std::invalid_argument("checked_bytes: negative count");
  const long double bytes = static_cast<long double>(count) * static_cast<long double>(elem);
  if (bytes > static_cast<long double>(kMaxBufferBytes)) throw_too_large(count, elem);
  return static_cast<size_t>(count) * elem;
}

int64_t checked_count(std::initializer_list<int64_t> extents, size_t elem) {
  long double count = 1;
  for (int64_t e : extents) {
    if (e < 0) throw std::invalid_argument("checked_count: negative extent");
    count *= static_cast<long double>(e);
  }
  if (count * static_cast<long double>(elem) > static_cast<long double>(kMaxBufferBytes))
    throw_too_large(count, elem);
  int64_t exact = 1;
  for (int64_t e : extents) exact *= e;  // cannot wrap: the product is below 2^60
  return exact;
}

size_t saturating_add(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

void require_memory(const MemoryNeeds& n, const std::string& what) {
  size_t dev_free = 0, dev_total = 0;
  const size_t dev_need = saturating_add(n.device, n.managed);
  if (dev_need > 0) CUDA_CHECK(cudaMemGetInfo(&dev_free, &dev_total));
  // Under a device profile (LADDER_DEVICE_PROFILE) the card is only as large as the profile's: its
  // whole memory free, as on a learner's otherwise idle card (what other processes hold on the real
  // GPU lowers dev_free, never the profile's share).
  if (const DeviceProfile* p = requested_device_profile(); p && dev_need > 0)
    dev_free = std::min(dev_free, p->global_mem);
  const std::string smaller =
      current_size_flags().empty() ? "" : "; a smaller size fits (" + current_size_flags() + ")";
  if (dev_need > 0 && saturating_add(dev_need, kDeviceMargin) > dev_free)
    throw CudaError(what + " needs " + format_bytes(dev_need) + " of device memory, " +
                    format_bytes(dev_free) + " free" + smaller);

  const size_t host_need = saturating_add(saturating_add(n.host, n.pinned), n.managed);
  size_t avail = host_bytes_available();
  if (host_need > 0 && avail > 0 && host_need > avail - avail / 10)
    throw CudaError(what + " needs " + format_bytes(host_need) + " of host memory, " +
                    format_bytes(avail) + " available" + smaller);
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

void prefetch_managed(const void* p, size_t bytes, int device, cudaStream_t stream) {
#if CUDART_VERSION >= 13000
  cudaMemLocation where{};
  where.type = device == kHostLocation ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  where.id = device == kHostLocation ? 0 : device;
  CUDA_CHECK(cudaMemPrefetchAsync(p, bytes, where, 0, stream));
#else
  CUDA_CHECK(cudaMemPrefetchAsync(p, bytes, device == kHostLocation ? cudaCpuDeviceId : device, stream));
#endif
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
