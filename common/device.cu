#include "common/device.h"

#include "common/buffers.h"
#include "common/check.h"
#include "common/cluster.cuh"
#include "common/nvtx.h"
#include "common/step.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <tuple>
#include <vector>

namespace ladder {

namespace {

constexpr size_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;

// Each GPU's limits as its CUDA properties report them (the CUDA C++ Programming Guide's table of
// compute capabilities; SM counts, L2 and memory from the vendor's specifications).
const DeviceProfile kProfiles[] = {
    // key      gpu                 cc     SMs thr/SM blk/SM smem/block   smem/SM      L2         memory
    {"v100",    "Tesla V100",       7, 0,  80, 2048, 32,  96 * KiB,  96 * KiB,  6 * MiB,  16 * GiB},
    {"t4",      "Tesla T4",         7, 5,  40, 1024, 16,  64 * KiB,  64 * KiB,  4 * MiB,  15 * GiB},
    {"a100",    "A100 40GB",        8, 0, 108, 2048, 32, 163 * KiB, 164 * KiB, 40 * MiB,  40 * GiB},
    {"rtx3060", "GeForce RTX 3060", 8, 6,  28, 1536, 16,  99 * KiB, 100 * KiB,  3 * MiB,  12 * GiB},
    {"l4",      "L4",               8, 9,  58, 1536, 24,  99 * KiB, 100 * KiB, 48 * MiB,  22 * GiB},
    {"rtx4090", "GeForce RTX 4090", 8, 9, 128, 1536, 24,  99 * KiB, 100 * KiB, 72 * MiB,  24 * GiB},
    {"rtx5090", "GeForce RTX 5090",12, 0, 170, 1536, 32,  99 * KiB, 100 * KiB, 96 * MiB,  32 * GiB},
};

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
  d.max_blocks_per_sm = p.maxBlocksPerMultiProcessor;
  d.regs_per_sm = p.regsPerMultiprocessor;
  d.smem_per_block_optin = p.sharedMemPerBlockOptin;
  d.smem_per_sm = p.sharedMemPerMultiprocessor;
  d.smem_reserved_per_block = p.reservedSharedMemPerBlock;
  d.global_mem = p.totalGlobalMem;
  d.l2_bytes = static_cast<size_t>(p.l2CacheSize);
  int mem_khz = 0, bus_bits = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, index));
  CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, index));
  d.theoretical_gbps = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  int sm_khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, index));
  d.sm_clock_mhz = sm_khz * 1e-3;
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

// A kernel of this library, compiled for the same architectures as every step: if the driver finds
// no code for the device in it (a build for sm_90 run on a T4), no step's kernel will launch either.
__global__ void probe_kernel() {}

void require_code_for(const DeviceInfo& d) {
  cudaFuncAttributes a{};
  const cudaError_t err = cudaFuncGetAttributes(&a, probe_kernel);
  if (err == cudaSuccess) return;
  cudaGetLastError();
  if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorInvalidDeviceFunction ||
      err == cudaErrorUnsupportedPtxVersion)
    throw UnsupportedError("this executable has no code for " + d.name + " (" + sm_string(d) +
                     "): rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + std::to_string(d.cc_major) +
                     std::to_string(d.cc_minor) + " (or native)");
  throw_cuda_error(err, "cudaFuncGetAttributes(probe_kernel)", __FILE__, __LINE__);
}

// The profile's limits wherever they are smaller than the real device's; its compute capability.
void apply_profile(DeviceInfo& d, const DeviceProfile& p) {
  d.name = std::string(p.gpu) + " (profile " + p.key + " on " + d.name + ")";
  d.profile = p.key;
  d.cc_major = p.cc_major;
  d.cc_minor = p.cc_minor;
  d.sm_count = std::min(d.sm_count, p.sm_count);
  d.max_threads_per_sm = std::min(d.max_threads_per_sm, p.max_threads_per_sm);
  d.max_blocks_per_sm = std::min(d.max_blocks_per_sm, p.max_blocks_per_sm);
  d.smem_per_block_optin = std::min(d.smem_per_block_optin, p.smem_per_block_optin);
  d.smem_per_sm = std::min(d.smem_per_sm, p.smem_per_sm);
  if (p.cc_major < 8) d.smem_reserved_per_block = 0;
  d.l2_bytes = std::min(d.l2_bytes, p.l2_bytes);
  d.global_mem = std::min(d.global_mem, p.global_mem);
}

// The step's declared requirement (add_step NEEDS), against the device or its profile: the one
// place a step refuses for its architecture.
void require_declared_architecture(const DeviceInfo& d) {
  const DeclaredStep& step = declared_step();
  if (step.needs.met_by(d.cc_major, d.cc_minor)) return;
  throw UnsupportedError(step.id + " needs " + step.needs.text() + "; this GPU (" + d.name + ") is " + sm_string(d));
}

DeviceInfo init(const CommonOptions& opts, bool gpu_required) {
  const DeviceProfile* profile = requested_device_profile();
  DeviceInfo d = select_device(opts, gpu_required);
  if (d.present) {
    if (profile) apply_profile(d, *profile);
    require_declared_architecture(d);
    require_code_for(d);
  }
  d.runtime_version = CUDART_VERSION;
  if (cudaDriverGetVersion(&d.driver_version) != cudaSuccess) d.driver_version = 0;
  cudaGetLastError();
  return d;
}

// The harness's copy kernels: 16-byte accesses, grid-stride, UNROLL independent loads in flight
// per thread before the first store. Any count of float4 is handled; bytes past the last whole
// float4 are not, and need not be: the ceiling buffers are sized in whole float4 (64-byte multiples).
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

// One block copies THREADS x PER_THREAD float4 in a row, every thread's loads issued before its
// stores (the shape of a framework's vectorized elementwise kernel): enough bytes in flight without
// a grid-stride loop's index arithmetic.
template <int THREADS, int PER_THREAD>
__global__ void __launch_bounds__(THREADS) copy_chunk(const float4* __restrict__ src, float4* __restrict__ dst, int64_t n4) {
  const int64_t base = static_cast<int64_t>(blockIdx.x) * THREADS * PER_THREAD + threadIdx.x;
  float4 v[PER_THREAD];
#pragma unroll
  for (int u = 0; u < PER_THREAD; ++u)
    if (base + u * THREADS < n4) v[u] = src[base + u * THREADS];
#pragma unroll
  for (int u = 0; u < PER_THREAD; ++u)
    if (base + u * THREADS < n4) dst[base + u * THREADS] = v[u];
}

// out = a + b in chunks like copy_chunk: two streams read for one written, the mix of a step that
// reads twice what it writes (vector_add), which DRAM serves faster than a copy's 1:1.
template <int THREADS, int PER_THREAD>
__global__ void __launch_bounds__(THREADS) add_chunk(const float4* __restrict__ a, const float4* __restrict__ b,
                                                     float4* __restrict__ out, int64_t n4) {
  const int64_t base = static_cast<int64_t>(blockIdx.x) * THREADS * PER_THREAD + threadIdx.x;
  float4 x[PER_THREAD], y[PER_THREAD];
#pragma unroll
  for (int u = 0; u < PER_THREAD; ++u)
    if (base + u * THREADS < n4) {
      x[u] = a[base + u * THREADS];
      y[u] = b[base + u * THREADS];
    }
#pragma unroll
  for (int u = 0; u < PER_THREAD; ++u)
    if (base + u * THREADS < n4)
      out[base + u * THREADS] = make_float4(x[u].x + y[u].x, x[u].y + y[u].y, x[u].z + y[u].z, x[u].w + y[u].w);
}

// Reads n4 float4 (grid-stride, 4 in flight per thread) and writes one sum per block: the read
// bandwidth a step that writes almost nothing can reach.
__global__ void __launch_bounds__(256) read_float4(const float4* __restrict__ src, int64_t n4, float* __restrict__ sums) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  float acc = 0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += 4 * stride) {
    float4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = i + u * stride < n4 ? src[i + u * stride] : make_float4(0, 0, 0, 0);
#pragma unroll
    for (int u = 0; u < 4; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
  }
  __shared__ float block_sum;
  if (threadIdx.x == 0) block_sum = 0;
  __syncthreads();
  atomicAdd(&block_sum, acc);
  __syncthreads();
  if (threadIdx.x == 0) sums[blockIdx.x] = block_sum;
}

// Reads THREADS x PER_THREAD float4 per block, all loads in flight before the first add, and writes
// one float per block: the read side's counterpart of copy_chunk.
template <int THREADS, int PER_THREAD>
__global__ void __launch_bounds__(THREADS) read_chunk(const float4* __restrict__ src, int64_t n4, float* __restrict__ sums) {
  const int64_t base = static_cast<int64_t>(blockIdx.x) * THREADS * PER_THREAD + threadIdx.x;
  float4 v[PER_THREAD];
#pragma unroll
  for (int u = 0; u < PER_THREAD; ++u) v[u] = base + u * THREADS < n4 ? src[base + u * THREADS] : make_float4(0, 0, 0, 0);
  float acc = 0;
#pragma unroll
  for (int u = 0; u < PER_THREAD; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  if (threadIdx.x % 32 == 0 && acc == 12345.0f) sums[blockIdx.x % 1024] = acc;  // keeps the loads; never true here
}

}  // namespace

DeviceInfo init_device(const CommonOptions& opts) { return init(opts, true); }
DeviceInfo init_device_if_present(const CommonOptions& opts) { return init(opts, false); }

const DeviceProfile* find_device_profile(const std::string& key) {
  for (const DeviceProfile& p : kProfiles)
    if (key == p.key) return &p;
  return nullptr;
}

std::vector<const DeviceProfile*> known_device_profiles() {
  std::vector<const DeviceProfile*> all;
  for (const DeviceProfile& p : kProfiles) all.push_back(&p);
  return all;
}

const DeviceProfile* requested_device_profile() {
  const char* want = std::getenv("LADDER_DEVICE_PROFILE");
  if (!want || !*want) return nullptr;
  if (const DeviceProfile* p = find_device_profile(want)) return p;
  std::string known;
  for (const DeviceProfile& p : kProfiles) known += (known.empty() ? "" : ", ") + std::string(p.key);
  throw UsageError("LADDER_DEVICE_PROFILE=" + std::string(want) + " is no known profile (known: " +
                   known + ")");
}

std::string sm_string(const DeviceInfo& dev) {
  return "sm_" + std::to_string(dev.cc_major) + std::to_string(dev.cc_minor);
}

namespace {

size_t& largest_smem_slot() {
  static size_t largest = 0;
  return largest;
}

// The kernel's static shared memory per block (cudaFuncGetAttributes, asked once per kernel:
// launchers call the functions below on every launch).
size_t static_shared_bytes(const void* kernel) {
  static std::map<const void*, size_t> known;
  if (auto it = known.find(kernel); it != known.end()) return it->second;
  cudaFuncAttributes a{};
  CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  return known[kernel] = a.sharedSizeBytes;
}

// Raises `kernel`'s dynamic shared memory limit to `bytes` where that is over the 48 KB every GPU
// gives without asking; never lowers it (cudaFuncSetAttribute, once per kernel and size: a host call
// between the timing events would be timed as GPU time).
void grant_dynamic_shared_memory(const void* kernel, size_t bytes) {
  if (bytes <= 48 * 1024) return;
  static std::map<const void*, size_t> granted;
  if (granted[kernel] >= bytes) return;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  granted[kernel] = bytes;
}

}  // namespace

size_t largest_shared_memory_per_block() { return largest_smem_slot(); }

namespace {

// The occupancy calculator on the real device, capped by the profile's limits (blocks_per_sm).
int query_blocks_per_sm(const DeviceInfo& dev, const void* kernel, int threads, size_t dynamic_smem) {
  const size_t block = static_shared_bytes(kernel) + dynamic_smem;
  if (block > dev.smem_per_block_optin) return 0;
  grant_dynamic_shared_memory(kernel, dynamic_smem);  // the calculator counts only what launches
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, dynamic_smem));
  if (dev.profile.empty()) return blocks;
  // The profile's caps: the calculator above knows only the real device.
  const size_t per_block = block + dev.smem_reserved_per_block;
  const int warps = (threads + 31) / 32;
  blocks = std::min(blocks, dev.max_threads_per_sm / (warps * 32));
  blocks = std::min(blocks, dev.max_blocks_per_sm);
  if (per_block > 0) blocks = std::min(blocks, static_cast<int>(dev.smem_per_sm / per_block));
  return std::max(blocks, 0);
}

}  // namespace

int blocks_per_sm(const DeviceInfo& dev, const void* kernel, int threads, size_t dynamic_smem) {
  // Asked of the driver once per kernel, block size and shared memory: launchers ask on every launch,
  // and a host call between the timing events would be timed as GPU time (one device per process).
  static std::map<std::tuple<const void*, int, size_t>, int> known;
  const auto key = std::make_tuple(kernel, threads, dynamic_smem);
  if (auto it = known.find(key); it != known.end()) return it->second;
  return known[key] = query_blocks_per_sm(dev, kernel, threads, dynamic_smem);
}

int resident_clusters(const DeviceInfo& dev, const void* kernel, int threads, size_t dynamic_smem, int cluster) {
  static std::map<std::tuple<const void*, int, size_t, int>, int> known;
  const auto key = std::make_tuple(kernel, threads, dynamic_smem, cluster);
  if (auto it = known.find(key); it != known.end()) return it->second;
  const int per_sm = blocks_per_sm(dev, kernel, threads, dynamic_smem);  // also grants the shared memory
  int clusters = 0;
  if (per_sm > 0) {
    cudaLaunchAttribute attribute = cluster_dimension(static_cast<unsigned>(cluster));
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(static_cast<unsigned>(cluster));
    config.blockDim = dim3(static_cast<unsigned>(threads));
    config.dynamicSmemBytes = dynamic_smem;
    config.attrs = &attribute;
    config.numAttrs = 1;
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
    clusters = std::min(clusters, dev.sm_count * per_sm / cluster);  // the profile's SMs
  }
  return known[key] = clusters;
}

std::string cuda_version_string(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}


void refuse_shared_memory(const std::string& what, size_t bytes, const DeviceInfo& dev) {
  throw UnsupportedError(what + " needs " + std::to_string(bytes) + " bytes of shared memory per block; this GPU (" +
                         dev.name + ") allows " + std::to_string(dev.smem_per_block_optin));
}

void require_shared_memory(const void* kernel, size_t bytes, const DeviceInfo& dev, const std::string& what) {
  const size_t block = static_shared_bytes(kernel) + bytes;
  largest_smem_slot() = std::max(largest_smem_slot(), block);  // for the record
  if (block > 48 * 1024 && block > dev.smem_per_block_optin) refuse_shared_memory(what, block, dev);
  grant_dynamic_shared_memory(kernel, bytes);
}

int resident_blocks(const DeviceInfo& dev, int threads_per_block) {
  return dev.sm_count * std::max(1, dev.max_threads_per_sm / threads_per_block);
}

Ceiling measure_copy_ceiling(const DeviceInfo& dev, const TimingPlan& plan, double read_bytes, double write_bytes) {
  NvtxRange range("ceiling: copy");
  // The step's own bytes, split evenly between a source and a destination (a copy moves each byte
  // once each way), so that a small problem meets the caches it would meet itself.
  const double step_bytes = std::max(read_bytes + write_bytes, 2.0 * (1 << 20));
  size_t bytes = static_cast<size_t>(step_bytes / 2);
  bytes -= bytes % 64;
  MemoryNeeds needs;
  needs.device = 2 * bytes;
  require_memory(needs, "the copy ceiling");
  DeviceBuffer<float4> src(static_cast<int64_t>(bytes / 16)), dst(static_cast<int64_t>(bytes / 16));
  CUDA_CHECK(cudaMemset(src.get(), 0x3C, bytes));  // nonzero data; the copy does not care
  DeviceBuffer<float> sums(std::max(resident_blocks(dev, 256), 1024));
  Stream s;
  const int64_t n4 = static_cast<int64_t>(bytes / 16);

  // Each candidate's GB/s (bytes read + written, or read alone for the read kernel).
  struct Tried {
    std::string name;
    double gbps;
  };
  std::vector<Tried> tried;
  auto time = [&](const std::string& name, double moved, const Work& work) {
    tried.push_back({name, gbps(moved, time_gpu(work, s, plan).median)});
  };
  time("cudaMemcpy D2D", 2.0 * bytes,
       [&] { CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s)); });
  const int resident = resident_blocks(dev, 256);
  time("grid-stride float4 x1", 2.0 * bytes, [&] {
    copy_float4<1><<<resident, 256, 0, s>>>(src.get(), dst.get(), n4);
    CUDA_CHECK_LAUNCH();
  });
  time("grid-stride float4 x4", 2.0 * bytes, [&] {
    copy_float4<4><<<resident, 256, 0, s>>>(src.get(), dst.get(), n4);
    CUDA_CHECK_LAUNCH();
  });
  // Blocks of `threads` x `per_thread` float4 that cover `count` float4.
  auto chunk_blocks = [](int64_t count, int threads, int per_thread) {
    return static_cast<unsigned>((count + int64_t(threads) * per_thread - 1) / (int64_t(threads) * per_thread));
  };
  auto chunks = [&](auto kernel, int threads, int per_thread, const char* name) {
    const unsigned blocks = chunk_blocks(n4, threads, per_thread);
    time(name, 2.0 * bytes, [&] {
      kernel<<<blocks, threads, 0, s>>>(src.get(), dst.get(), n4);
      CUDA_CHECK_LAUNCH();
    });
  };
  chunks(copy_chunk<128, 4>, 128, 4, "chunks 128 x 4 float4");
  chunks(copy_chunk<128, 8>, 128, 8, "chunks 128 x 8 float4");
  chunks(copy_chunk<256, 4>, 256, 4, "chunks 256 x 4 float4");
  chunks(copy_chunk<512, 2>, 512, 2, "chunks 512 x 2 float4");
  // A step that reads about twice what it writes (vector_add) is held to the best add too: a
  // 2:1 mix, which DRAM serves faster than a copy's 1:1.
  if (read_bytes >= 1.5 * write_bytes) {
    const int64_t half = n4 / 2;  // a and b: the two halves of src; out: the first half of dst
    auto adds = [&](auto kernel, int threads, int per_thread, const char* name) {
      const unsigned blocks = chunk_blocks(half, threads, per_thread);
      time(name, 3.0 * 16 * half, [&] {
        kernel<<<blocks, threads, 0, s>>>(src.get(), src.get() + half, dst.get(), half);
        CUDA_CHECK_LAUNCH();
      });
    };
    adds(add_chunk<512, 2>, 512, 2, "add 2:1, chunks 512 x 2 float4");
    adds(add_chunk<256, 4>, 256, 4, "add 2:1, chunks 256 x 4 float4");
  }
  // A step that mostly reads (under 5% of its bytes written) is held to the best read too.
  const bool reads = write_bytes < 0.05 * (read_bytes + write_bytes);
  if (reads) {
    time("read (float4 sum)", 1.0 * bytes, [&] {
      read_float4<<<resident, 256, 0, s>>>(src.get(), n4, sums.get());
      CUDA_CHECK_LAUNCH();
    });
    const unsigned blocks = chunk_blocks(n4, 512, 4);
    time("read, chunks 512 x 4 float4", 1.0 * bytes, [&] {
      read_chunk<512, 4><<<blocks, 512, 0, s>>>(src.get(), n4, sums.get());
      CUDA_CHECK_LAUNCH();
    });
  }

  Ceiling c;
  c.unit = "GB/s";
  std::string all;
  for (const Tried& t : tried) {
    if (t.gbps > c.value) {
      c.value = t.gbps;
      c.name = std::string(reads || t.name.rfind("add", 0) == 0 ? "bandwidth" : "copy") + " (" + t.name + ")";
    }
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%s %.0f", all.empty() ? "" : ", ", t.name.c_str(), t.gbps);
    all += buf;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, " GB/s; %.0f MB each way", bytes / 1e6);
  c.detail = all + buf;
  return c;
}

Stats measure_copy_call(size_t bytes, const TimingPlan& plan) {
  NvtxRange range("ceiling: copy call");
  MemoryNeeds needs;
  needs.device = 2 * bytes;
  require_memory(needs, "the copy call");
  DeviceBuffer<char> src(static_cast<int64_t>(bytes)), dst(static_cast<int64_t>(bytes));
  CUDA_CHECK(cudaMemset(src.get(), 0x3C, bytes));
  Stream s;
  return time_gpu([&] { CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s)); },
                  s, plan);
}

namespace {
// SMs x peak SM clock x FLOP per SM and clock, in GFLOP/s.
double spec_gflops(const DeviceInfo& dev, double flop_per_sm_clock) {
  return dev.sm_count * flop_per_sm_clock * dev.sm_clock_mhz * 1e-3;
}
int cc_of(const DeviceInfo& dev) { return dev.cc_major * 10 + dev.cc_minor; }
}  // namespace

double spec_fp32_gflops(const DeviceInfo& dev) {
  const int cc = cc_of(dev);
  const bool half = cc == 60 || cc == 70 || cc == 72 || cc == 75 || cc == 80;  // 64 FMA lanes per SM
  return spec_gflops(dev, half ? 128.0 : 256.0);
}

double spec_tf32_gflops(const DeviceInfo& dev) {
  const int cc = cc_of(dev);
  return spec_gflops(dev, cc == 80 ? 1024.0 : cc == 90 ? 2048.0 : 0.0);
}

namespace {
// 8 independent FMA chains per thread, kIters deep: the FMA pipes stay full without memory traffic.
constexpr int kFmaIters = 1024;
__global__ void __launch_bounds__(256) fma_chains(float* out, float a, float b) {
  float x[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) x[i] = threadIdx.x * 1e-3f + i;
  for (int it = 0; it < kFmaIters; ++it)
#pragma unroll
    for (int i = 0; i < 8; ++i) x[i] = fmaf(x[i], a, b);
  float sum = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) sum += x[i];
  if (sum == 12345.0f) out[0] = sum;  // never true for these inputs; keeps the chains alive
}
}  // namespace

Ceiling measure_fma_ceiling(const DeviceInfo& dev, const TimingPlan& plan) {
  NvtxRange range("ceiling: FMA");
  DeviceBuffer<float> out(1);
  Stream s;
  const int blocks = 4 * resident_blocks(dev, 256);
  const Stats t = time_gpu([&] {
    fma_chains<<<blocks, 256, 0, s>>>(out.get(), 0.999f, 1e-3f);
    CUDA_CHECK_LAUNCH();
  }, s, plan);
  const double flops = 2.0 * 8 * kFmaIters * 256.0 * blocks;
  Ceiling c;
  c.name = "FP32 FMA (measured: 8 FMA chains per thread)";
  c.unit = "GFLOP/s";
  c.value = flops / (t.median * 1e6);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.0f GFLOP/s; spec %.0f", c.value, spec_fp32_gflops(dev));
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
