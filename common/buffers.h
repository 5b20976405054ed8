// Memory: the guard that refuses a size before anything is allocated, and RAII buffers for device,
// pinned (optionally mapped), managed and plain host memory. Allocation failures name the bytes.
#pragma once

#include "common/check.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <string>

namespace ladder {

// The most bytes one buffer may ask for: 2^60 (one exbibyte), far past any machine, and small enough
// that a handful of such byte counts, multiplied by small factors and added, cannot wrap 64 bits.
constexpr size_t kMaxBufferBytes = size_t(1) << 60;

// Bytes of `count` elements of `elem` bytes each. A count whose bytes would pass kMaxBufferBytes
// throws CudaError (exit 3) naming the bytes it would need, so no later multiplication, sum or
// allocation ever sees a wrapped size. Every folder sizes its buffers through this (or bytes_of).
// A negative count throws std::invalid_argument (exit 3 too).
size_t checked_bytes(int64_t count, size_t elem);
// The element count of a multi-dimensional array (rows x cols, N x M x L), checked the same way:
// throws CudaError naming the bytes when count * elem would pass kMaxBufferBytes, and
// std::invalid_argument for a negative extent.
int64_t checked_count(std::initializer_list<int64_t> extents, size_t elem);
// a + b, or SIZE_MAX when the sum would wrap: the memory guard adds with this.
size_t saturating_add(size_t a, size_t b);

// Whether `p` is a multiple of `bytes` (a power of two) from address 0: whether it may be accessed
// as a vector of that size.
inline bool aligned_to(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }
// Whether `p` may be accessed as float4 / double2 / int4: 16-byte aligned (cudaMalloc gives 256).
inline bool aligned16(const void* p) { return aligned_to(p, 16); }

// What a step will allocate, added up before it allocates anything.
struct MemoryNeeds {
  size_t device = 0;    // cudaMalloc
  size_t managed = 0;   // cudaMallocManaged: counted against device memory, never oversubscribed
  size_t pinned = 0;    // cudaMallocHost / cudaHostAlloc (mapped included)
  size_t host = 0;      // pageable malloc (inputs, references, result copies)
};

// Bytes of host memory available now, and in all (MemAvailable, MemTotal of /proc/meminfo; 0 if unknown).
size_t host_bytes_available();
size_t host_bytes_total();

// Throws CudaError (exit 3) naming the bytes when the needs exceed what the device has free (minus a
// 256 MiB margin for the context and library workspaces), when pageable + pinned + managed host
// bytes exceed the host's available memory (minus 10%), or when pinned bytes exceed half of the
// host's memory (page-locking more than that starves the OS). Managed memory is checked against the
// device because oversubscribing it can hang the GPU instead of failing. Under a device profile the
// free device memory is at most the profile's; where /proc/meminfo cannot be read, the host checks
// are skipped.
void require_memory(const MemoryNeeds& needs, const std::string& what);

std::string format_bytes(size_t bytes);  // "1.20 GB (1200000000 bytes)"

template <typename T>
size_t bytes_of(int64_t count) {
  return checked_bytes(count, sizeof(T));
}

enum class HostKind { pageable, pinned, mapped, managed };

// Moves managed pages to device `device`, or to the host with kHostLocation, in bulk on `stream`.
// CUDA 13 takes a cudaMemLocation; CUDA 12 took a device number (cudaCpuDeviceId for the host).
constexpr int kHostLocation = -1;
void prefetch_managed(const void* p, size_t bytes, int device, cudaStream_t stream);

// Allocators behind the buffers: each throws CudaError naming the bytes it asked for.
void* device_allocate(size_t bytes);
void* host_allocate(size_t bytes, HostKind kind);
void host_release(void* p, HostKind kind);

// Device memory (cudaMalloc), freed with its scope. A count of 0 allocates nothing (get() is null).
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(int64_t count) : count_(count) {
    if (count > 0) ptr_ = static_cast<T*>(device_allocate(bytes()));
  }
  ~DeviceBuffer() { if (ptr_) cudaFree(ptr_); }
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept { swap(o); return *this; }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return ptr_; }
  int64_t size() const { return count_; }
  size_t bytes() const { return bytes_of<T>(count_); }
  // Fill every byte with 0xFF: NaN for floats, -1 for integers — an unwritten element fails checks.
  void poison(cudaStream_t s = 0) { if (ptr_) CUDA_CHECK(cudaMemsetAsync(ptr_, 0xFF, bytes(), s)); }

 private:
  void swap(DeviceBuffer& o) { std::swap(ptr_, o.ptr_); std::swap(count_, o.count_); }
  T* ptr_ = nullptr;
  int64_t count_ = 0;
};


// Host-visible memory of the four kinds the vector_add ladder compares. Pageable is plain malloc
// (no zero-fill: every buffer is written before it is read); pinned is cudaMallocHost (DMA-able);
// mapped is cudaHostAlloc(..., cudaHostAllocMapped) (kernels read it over PCIe); managed is
// cudaMallocManaged (pages migrate on demand or by prefetch). Freed with its scope; a count of 0
// allocates nothing (get() is null).
template <typename T>
class HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(int64_t count, HostKind kind = HostKind::pageable) : count_(count), kind_(kind) {
    if (count > 0) allocate(bytes_of<T>(count));
  }
  ~HostBuffer() { release(); }
  HostBuffer(HostBuffer&& o) noexcept { swap(o); }
  HostBuffer& operator=(HostBuffer&& o) noexcept { swap(o); return *this; }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  T* get() const { return ptr_; }
  T& operator[](int64_t i) const { return ptr_[i]; }
  int64_t size() const { return count_; }
  size_t bytes() const { return bytes_of<T>(count_); }
  HostKind kind() const { return kind_; }
  // The device-side address of mapped memory (same as get() under unified addressing).
  T* device_alias() const {
    void* d = nullptr;
    CUDA_CHECK(cudaHostGetDevicePointer(&d, ptr_, 0));
    return static_cast<T*>(d);
  }

 private:
  void allocate(size_t bytes);
  void release();
  void swap(HostBuffer& o) {
    std::swap(ptr_, o.ptr_); std::swap(count_, o.count_); std::swap(kind_, o.kind_);
  }
  T* ptr_ = nullptr;
  int64_t count_ = 0;
  HostKind kind_ = HostKind::pageable;
};


template <typename T>
void HostBuffer<T>::allocate(size_t bytes) {
  ptr_ = static_cast<T*>(host_allocate(bytes, kind_));
}
template <typename T>
void HostBuffer<T>::release() {
  if (ptr_) host_release(ptr_, kind_);
  ptr_ = nullptr;
}

}  // namespace ladder

namespace ladder {

// A CUDA stream that is destroyed with its scope. Deliberately a *blocking* stream: it is ordered
// with the legacy default stream, so a harness that fills a buffer with plain cudaMemcpy/cudaMemset
// (which return before a device-to-device copy or a memset has finished) and then uses the buffer
// on this stream cannot race. Streams still overlap with each other (vector_add 06).
class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreate(&s_)); }
  ~Stream() { if (s_) cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  operator cudaStream_t() const { return s_; }
  void sync() const { CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

}  // namespace ladder
