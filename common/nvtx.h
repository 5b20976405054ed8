// NVTX ranges so that an Nsight Systems timeline reads like the tutorial: one range for the step,
// nested ones for its phases ("verify run", "timed kernel", "end-to-end", "ceiling").
#pragma once

#include <nvtx3/nvToolsExt.h>

#include <string>

namespace ladder {

class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace ladder
