// NVTX ranges so that an Nsight Systems timeline reads like the tutorial: one range for the step,
// nested ones for its phases ("kernel: checked run", "kernel: timed", "ceiling: copy"). With
// --trace the same ranges go into the step's own trace too (common/activity.h), for GPUs where
// Nsight Systems is not installed.
#pragma once

#include "common/activity.h"

#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <string>

namespace ladder {

class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name) : name_(name) {
    nvtxRangePushA(name.c_str());
    if (GpuActivity::trace_requested()) start_ns_ = GpuActivity::now_ns();
  }
  ~NvtxRange() {
    nvtxRangePop();
    if (start_ns_) GpuActivity::get().host_range(name_, start_ns_, GpuActivity::now_ns());
  }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

 private:
  std::string name_;
  uint64_t start_ns_ = 0;
};

}  // namespace ladder
