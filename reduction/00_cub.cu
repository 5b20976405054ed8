// reduction step 00: cub::DeviceReduce::Sum, the reference and the ceiling.
// CUB's device-wide reduction: each thread block reads many tiles with vectorized loads and reduces
// them in registers and with warp shuffles, writes one partial, and a second small kernel reduces
// the partials. The harness runs the same call as every step's ceiling, in the step's own process.
// The output is an int64, and CUB takes its accumulator type from the output (InitT = int64_t, so
// AccumT = int64_t): no partial inside CUB can overflow, even at 2^28 values of 255.
// Changes from nothing: this is the yardstick; every later step reports its % of this bandwidth.
// Costs: a temporary-storage allocation (sized by a first call with nullptr), made once, untimed.
// Source: not in the posts; "【CUDA】Branch Divergence and Unrolling Loop" sums on the host instead.
// Run: build/bin/reduction_00_cub
#include "reduction/reduction.cuh"

namespace reduction::cub_reference {

size_t workspace_bytes(const ladder::DeviceInfo&, int64_t n) { return cub_temp_bytes(n); }

void launch(const ladder::DeviceInfo&, const int* data, int64_t n, int64_t* total, Workspace ws,
            cudaStream_t stream) {
  cub_sum(data, n, total, ws.ptr, ws.bytes, stream);  // CUDA_CHECKs the call and its launches
}

const Step kStep{"reduction/00_cub", /*partials=*/nullptr, 0, 0, launch, workspace_bytes};
LADDER_STEP(kStep);

}  // namespace reduction::cub_reference
