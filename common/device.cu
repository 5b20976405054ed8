#include "common/device.h"

#include "common/buffers.h"
#include "common/check.h"
#include "common/nvtx.h"

#include <algorithm>
#include <map>

namespace ladder {

namespace {

DeviceInfo query(int index) {
  DeviceInfo d;
  d.present = true;
  d.index = index;
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, index));
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  d.global_mem = p.totalGlobalMem;
  d.l2_bytes = static_cast<size_t>(p.l2CacheSize);
  int mem_khz = 0, bus_bits = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, index));
  CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, index));
  d.theoretical_gbps = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  return d;
}

DeviceInfo select_device(const CommonOptions& opts, bool gpu_required) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();
    std::string why = err == cudaErrorInsufficientDriver ? "no CUDA driver on this machine"
                      : err == cudaErrorNoDevice || count == 0
                          ? "no CUDA device on this machine"
                          : std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(err);
    if (gpu_required) throw NoDeviceError(why);
    return DeviceInfo{};
  }
  if (opts.device >= count)
    throw UsageError("--device " + std::to_string(opts.device) + " does not exist (" +
                     std::to_string(count) + " device" + (count == 1 ? "" : "s") + ")");
  CUDA_CHECK(cudaSetDevice(opts.device));
  return query(opts.device);
}

DeviceInfo init(const CommonOptions& opts, bool gpu_required) {
  DeviceInfo d = select_device(opts, gpu_required);
  d.runtime_version = CUDART_VERSION;
  if (cudaDriverGetVersion(&d.driver_version) != cudaSuccess) d.driver_version = 0;
  cudaGetLastError();
  return d;
}

// The harness's copy kernels: 16-byte accesses, grid-stride, UNROLL independent loads in flight
// per thread before the first store. The tail (bytes not a multiple of 16 * UNROLL) is not needed:
// the ceiling buffers are sized in whole float4 groups.
template <int UNROLL>
__global__ void copy_float4(const float4* __restrict__ src, float4* __restrict__ dst, int64_t n4) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; base < n4;
       base += stride * UNROLL) {
    float4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      if (base + u * stride < n4) v[u] = src[base + u * stride];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      if (base + u * stride < n4) dst[base + u * stride] = v[u];
  }
}

}  // namespace

DeviceInfo init_device(const CommonOptions& opts) { return init(opts, true); }
DeviceInfo init_device_if_present(const CommonOptions& opts) { return init(opts, false); }

std::string cuda_version_string(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

void require_shared_memory(const void* kernel, size_t bytes, const DeviceInfo& dev, const std::string& what) {
  if (bytes <= 48 * 1024) return;
  static std::map<const void*, size_t> granted;
  if (granted[kernel] >= bytes) return;
  int optin = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev.index));
  if (bytes > static_cast<size_t>(optin))
    throw UsageError(what + " needs " + std::to_string(bytes) +
                     " bytes of shared memory per block; this GPU allows " + std::to_string(optin));
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  granted[kernel] = bytes;
}

int resident_blocks(const DeviceInfo& dev, int threads_per_block) {
  return dev.sm_count * std::max(1, dev.max_threads_per_sm / threads_per_block);
}

Ceiling measure_copy_ceiling(const DeviceInfo& dev, const TimingPlan& plan) {
  NvtxRange range("ceiling: copy");
  size_t bytes = std::max<size_t>(4 * dev.l2_bytes, size_t(256) << 20);
  bytes -= bytes % 64;
  MemoryNeeds needs;
  needs.device = 2 * bytes;
  require_memory(needs, "the copy ceiling");
  DeviceBuffer<float4> src(static_cast<int64_t>(bytes / 16)), dst(static_cast<int64_t>(bytes / 16));
  CUDA_CHECK(cudaMemset(src.get(), 0x3C, bytes));  // nonzero data; the copy does not care

  Stream s;

  Stats memcpy_stats = time_gpu(
      [&] { CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s)); },
      s, plan);
  const int64_t n4 = static_cast<int64_t>(bytes / 16);
  const int blocks = resident_blocks(dev, 256);
  Stats k1 = time_gpu([&] {
    copy_float4<1><<<blocks, 256, 0, s>>>(src.get(), dst.get(), n4);
    CUDA_CHECK_LAUNCH();
  }, s, plan);
  Stats k4 = time_gpu([&] {
    copy_float4<4><<<blocks, 256, 0, s>>>(src.get(), dst.get(), n4);
    CUDA_CHECK_LAUNCH();
  }, s, plan);

  double m = gbps(2.0 * bytes, memcpy_stats.median),
         best_kernel = std::max(gbps(2.0 * bytes, k1.median), gbps(2.0 * bytes, k4.median));
  Ceiling c;
  c.unit = "GB/s";
  c.value = std::max(m, best_kernel);
  c.name = m >= best_kernel ? "copy (cudaMemcpy D2D)" : "copy (float4 copy kernel)";
  char buf[160];
  std::snprintf(buf, sizeof buf, "cudaMemcpy D2D %.0f GB/s, float4 copy kernel %.0f GB/s, %.0f MB buffers",
                m, best_kernel, bytes / 1e6);
  c.detail = buf;
  return c;
}

TransferBandwidth measure_pinned_transfers(size_t bytes, const TimingPlan& plan) {
  NvtxRange range("ceiling: pinned transfers");
  MemoryNeeds needs;
  needs.device = 2 * bytes;
  needs.pinned = 2 * bytes;
  require_memory(needs, "the transfer ceiling");
  HostBuffer<char> h_in(static_cast<int64_t>(bytes), HostKind::pinned),
      h_out(static_cast<int64_t>(bytes), HostKind::pinned);
  DeviceBuffer<char> d_in(static_cast<int64_t>(bytes)), d_out(static_cast<int64_t>(bytes));
  std::fill(h_in.get(), h_in.get() + bytes, 1);
  Stream a, b;
  TransferBandwidth t;
  t.h2d_gbps = gbps(bytes, time_gpu([&] {
    CUDA_CHECK(cudaMemcpyAsync(d_in.get(), h_in.get(), bytes, cudaMemcpyHostToDevice, a));
  }, a, plan).median);
  t.d2h_gbps = gbps(bytes, time_gpu([&] {
    CUDA_CHECK(cudaMemcpyAsync(h_out.get(), d_out.get(), bytes, cudaMemcpyDeviceToHost, a));
  }, a, plan).median);
  t.both_gbps = gbps(2.0 * bytes, time_host([&] {
    CUDA_CHECK(cudaMemcpyAsync(d_in.get(), h_in.get(), bytes, cudaMemcpyHostToDevice, a));
    CUDA_CHECK(cudaMemcpyAsync(h_out.get(), d_out.get(), bytes, cudaMemcpyDeviceToHost, b));
    CUDA_CHECK(cudaStreamSynchronize(a));
    CUDA_CHECK(cudaStreamSynchronize(b));
  }, plan).median);
  return t;
}

}  // namespace ladder
