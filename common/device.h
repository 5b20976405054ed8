// The device and the ceilings every step is measured against, both measured in the step's own
// process (docs/measuring.md).
#pragma once

#include "common/cli.h"
#include "common/timing.h"

#include <cstdint>
#include <string>

namespace ladder {

struct DeviceInfo {
  bool present = false;          // false only for CPU steps on a machine without a GPU
  int index = 0;
  std::string name = "none";
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_threads_per_sm = 0;
  size_t global_mem = 0;
  size_t l2_bytes = 0;
  double theoretical_gbps = 0;   // 2 * memory clock * bus width (DDR), from the device attributes
  int runtime_version = 0;       // CUDART_VERSION this binary was built with, e.g. 13000
  int driver_version = 0;        // the newest CUDA the installed driver supports (0: no driver)
};

// "13.0" from 13000.
std::string cuda_version_string(int version);

// cudaGetDeviceCount: failure or zero devices -> NoDeviceError (exit 77) with the reason; then
// --device out of range -> UsageError (exit 2); then cudaSetDevice and the properties.
DeviceInfo init_device(const CommonOptions& opts);
// As init_device, but a machine without a GPU gives present == false instead of exit 77.
DeviceInfo init_device_if_present(const CommonOptions& opts);

// How many resident 256-thread blocks fill the device: SMs x (threads per SM / 256). Grid-stride
// kernels launch this many, read off the device, never hard-coded.
int resident_blocks(const DeviceInfo& dev, int threads_per_block);

// Opts `kernel` into `bytes` of dynamic shared memory per block where that is more than the 48 KB
// every GPU gives without asking (cudaFuncSetAttribute, once per kernel and size: a host call
// between the timing events would be timed as GPU time). More than this GPU allows per block is a
// UsageError (exit 2) naming the bytes; `what` names the kernel in that message.
void require_shared_memory(const void* kernel, size_t bytes, const DeviceInfo& dev, const std::string& what);

struct Ceiling {
  std::string name;
  double value = 0;      // in `unit`
  std::string unit;
  std::string detail;    // how it was obtained, for the human block
};

// The one copy ceiling (docs/measuring.md): max(cudaMemcpy device-to-device, the best copy
// kernel), bytes read + written, on buffers of max(4 x L2, 256 MiB) each.
Ceiling measure_copy_ceiling(const DeviceInfo& dev, const TimingPlan& plan);

// Pinned host<->device bandwidth on `bytes`-sized buffers: each direction alone and both at once
// (two streams), GB/s. Reported by steps that own their transfers.
struct TransferBandwidth {
  double h2d_gbps = 0, d2h_gbps = 0, both_gbps = 0;
};
TransferBandwidth measure_pinned_transfers(size_t bytes, const TimingPlan& plan);

}  // namespace ladder
