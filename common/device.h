// The device and the ceilings every step is measured against, both measured in the step's own
// process (docs/measuring.md).
#pragma once

#include "common/cli.h"
#include "common/timing.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ladder {

// A smaller GPU to pretend to be: LADDER_DEVICE_PROFILE=t4 (docs/contract.md, "Device profiles").
// Its limits replace the real device's wherever they are smaller, and its compute capability
// replaces the real one, so every decision a step takes from DeviceInfo — the tile that fits, the
// grid that fills the SMs, the features it may use, the memory the guard allows — is the one it
// would take on that GPU. The kernels still run on the real GPU at its speed: a profile proves that
// a step adapts or refuses cleanly, never how fast it would run there.
struct DeviceProfile {
  const char* key;                 // "t4": the value of LADDER_DEVICE_PROFILE
  const char* gpu;                 // "Tesla T4"
  int cc_major, cc_minor;
  int sm_count;
  int max_threads_per_sm;
  int max_blocks_per_sm;
  size_t smem_per_block_optin;     // cudaDevAttrMaxSharedMemoryPerBlockOptin
  size_t smem_per_sm;              // cudaDevAttrMaxSharedMemoryPerMultiprocessor
  size_t l2_bytes;
  size_t global_mem;               // the card's memory; the guard allows no more than this
};
// The profile LADDER_DEVICE_PROFILE names, or nullptr when it is unset or empty; an unknown name is
// a UsageError (exit 2) listing the known ones.
const DeviceProfile* requested_device_profile();
// The profile called `key` ("t4"), or nullptr; and every profile, in the table's order.
const DeviceProfile* find_device_profile(const std::string& key);
std::vector<const DeviceProfile*> known_device_profiles();

struct DeviceInfo {
  bool present = false;          // false only for CPU steps on a machine without a GPU
  int index = 0;
  std::string name = "none";     // under a profile: "Tesla T4 (profile t4 on NVIDIA H100 80GB HBM3)"
  std::string profile;           // "" or the active profile's key
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int regs_per_sm = 0;
  size_t smem_per_block_optin = 0;   // the most dynamic + static shared memory one block may have
  size_t smem_per_sm = 0;
  size_t smem_reserved_per_block = 0;  // what the system keeps of each block's share (1 KB on sm_80+)
  size_t global_mem = 0;
  size_t l2_bytes = 0;
  double theoretical_gbps = 0;   // 2 * memory clock * bus width (DDR), from the device attributes
  double sm_clock_mhz = 0;       // the SMs' peak clock (cudaDevAttrClockRate)
  int runtime_version = 0;       // CUDART_VERSION this binary was built with, e.g. 13000
  int driver_version = 0;        // the newest CUDA the installed driver supports (0: no driver)
};

// "13.0" from 13000.
std::string cuda_version_string(int version);

// LADDER_DEVICE_PROFILE first: an unknown name -> UsageError (exit 2), GPU or not. Then
// cudaGetDeviceCount: failure or zero devices -> NoDeviceError (exit 77) with the reason; then
// --device out of range -> UsageError (exit 2); then cudaSetDevice, the properties and the profile;
// then the step's declared requirement (common/step.h, add_step NEEDS): a device or profile that
// lacks it -> UnsupportedError (exit 2, "unsupported: sgemm/09_pipelined needs sm_80 or newer
// (cp.async); this GPU (Tesla T4 ...) is sm_75"); then an executable without code for the device ->
// UnsupportedError (exit 2, naming the architecture to rebuild for). Steps check nothing of the
// architecture themselves.
DeviceInfo init_device(const CommonOptions& opts);
// As init_device, but a machine without a GPU gives present == false instead of exit 77.
DeviceInfo init_device_if_present(const CommonOptions& opts);

// "sm_75": what a message names.
std::string sm_string(const DeviceInfo& dev);

// How many blocks of `kernel` (launched with `threads` threads and `dynamic_smem` bytes of dynamic
// shared memory) fit on one SM at once: the CUDA occupancy calculator on the real device, capped by
// the profile's shared memory, threads and blocks per SM. 0 means the block does not fit at all
// (more shared memory than the GPU gives one block). Safe to ask of every candidate a tunable step
// considers: over 48 KB it raises the kernel's opt-in, which only require_shared_memory — called for
// the kernel that launches — reports.
int blocks_per_sm(const DeviceInfo& dev, const void* kernel, int threads, size_t dynamic_smem);

// How many clusters of `cluster` blocks of this kernel can be resident at once
// (cudaOccupancyMaxActiveClusters: a cluster's blocks must fit on the SMs of one GPC together), capped
// at dev.sm_count x blocks_per_sm / cluster, so by the profile too. 0: none fits. Asked of the driver
// once per kernel and shape.
int resident_clusters(const DeviceInfo& dev, const void* kernel, int threads, size_t dynamic_smem, int cluster);

// How many blocks of `threads_per_block` threads fill the device by the thread limit alone (registers
// and shared memory not counted): SMs x (threads per SM / threads_per_block, rounded down, at least
// 1). Grid-stride kernels launch this many, read off the device, never hard-coded.
int resident_blocks(const DeviceInfo& dev, int threads_per_block);

// Opts `kernel` into `bytes` of dynamic shared memory per block where that is more than the 48 KB
// every GPU gives without asking (cudaFuncSetAttribute, once per kernel and size: a host call
// between the timing events would be timed as GPU time). More than this GPU allows per block is a
// UnsupportedError (exit 2, "unsupported: <what> needs N bytes of shared memory per block; this GPU
// (...) allows M", N the block's static + dynamic bytes); `what` names the kernel in that message.
// The block's static + dynamic bytes are compared with the limit, where they are over 48 KB, and
// recorded for largest_shared_memory_per_block.
void require_shared_memory(const void* kernel, size_t bytes, const DeviceInfo& dev, const std::string& what);

// The one refusal for shared memory, so that every step words it alike and the tests can check it
// against the device: UnsupportedError (exit 2) "<what> needs <bytes> bytes of shared memory per
// block; this GPU (<name>) allows <dev.smem_per_block_optin>".
[[noreturn]] void refuse_shared_memory(const std::string& what, size_t bytes, const DeviceInfo& dev);

// The most shared memory (static + dynamic) of one block among the kernels this process passed to
// require_shared_memory: the record's extra.smem_per_block_bytes (0: none).
size_t largest_shared_memory_per_block();

// The datasheet-style peaks a record is also compared with (named "spec" wherever they appear, so
// that nobody mistakes them for a measured ceiling): SMs x peak SM clock x the architecture's rate
// per SM and clock. FP32: 64 FMA lanes per SM on sm_60, sm_70/72/75 and sm_80, 128 elsewhere (sm_86
// on), 2 FLOP each. TF32 tensor cores, dense: 1024 FLOP per SM and clock on sm_80 (A100), 2048 on
// sm_90 (H100); 0 (unknown) elsewhere, where the rate differs between data-center and GeForce
// parts. The memory's is theoretical_gbps. Under a profile these mix the profile's SMs with the
// real GPU's clock: a profile says nothing about speed.
double spec_fp32_gflops(const DeviceInfo& dev);
double spec_tf32_gflops(const DeviceInfo& dev);

struct Ceiling {
  std::string name;
  double value = 0;      // in `unit`
  std::string unit;
  std::string detail;    // how it was obtained, for the human block
};

// The one copy ceiling (docs/measuring.md): the best of cudaMemcpy device-to-device and a family of
// tuned copy kernels (16-byte accesses; grid-stride with 1 or 4 in flight, and chunks of 2-8 float4
// per thread as a framework's elementwise kernels have them), bytes read + written, timed like the
// step (kernel_ms), on the step's own bytes (read_bytes + write_bytes, at least 2 MiB) split
// between a source and a destination. A step that reads at least 1.5 times what it writes
// (vector_add's 2:1) is also held to two tuned adds (two streams read, one written), and one that
// writes under 5% of its bytes (avg_matvec, which gets the adds too) to two read kernels: DRAM
// serves those mixes faster than a copy. The ceiling is the best candidate, named "bandwidth (...)"
// for a read-mostly step always, otherwise when an add wins, else "copy (...)"; `detail` lists every
// candidate's GB/s.
Ceiling measure_copy_ceiling(const DeviceInfo& dev, const TimingPlan& plan, double read_bytes, double write_bytes);

// One cudaMemcpyAsync device-to-device of `bytes`, timed like a step: Stats::call_median is what a
// caller waits for it (CUDA events around the call, host enqueue included), Stats::median the
// copy's own GPU time. The yardstick of a launch-bound step's call_ms: the simplest call that
// touches every byte of the input (avg_matvec 07).
Stats measure_copy_call(size_t bytes, const TimingPlan& plan);

// Pinned host<->device bandwidth on `bytes`-sized buffers, GB/s: each direction alone by the copy's
// GPU time (median, as kernel_ms), and both at once (two streams, 2 x bytes) by the host clock from
// the first enqueue until both streams are done. Reported by steps that own their transfers.
struct TransferBandwidth {
  double h2d_gbps = 0, d2h_gbps = 0, both_gbps = 0;
};
TransferBandwidth measure_pinned_transfers(size_t bytes, const TimingPlan& plan);

// The FP32 FMA rate this GPU demonstrably reaches, GFLOP/s (2 per FMA): a kernel of 8 independent
// chains of 1024 FMAs per thread, 4 x resident_blocks(dev, 256) blocks of 256 threads, timed like a
// step (median). The arithmetic roof of the rooflines (separable_conv's long kernels are judged
// against it).
Ceiling measure_fma_ceiling(const DeviceInfo& dev, const TimingPlan& plan);

}  // namespace ladder
