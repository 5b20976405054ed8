// separable_conv step 02: pinned (page-locked) host buffers; the kernels are step 01's, unchanged.
// The copy engines move data by DMA, which needs physical pages that cannot move. From malloc'd
// memory the driver first copies each piece into a pinned staging buffer and then DMAs it: two
// copies, one of them by the CPU. cudaMallocHost hands out memory that is already pinned, so the
// copy engine reads and writes it directly: the end-to-end time (total_ms, and the extras
// transfer_floor_ms / transfer_floor_gbps) falls, the kernel time does not change.
// Changes from step 01: image, taps and result live in cudaMallocHost memory instead of malloc.
// Costs: pinned memory is taken from the OS for good (the harness refuses to pin more than half of
// RAM) and slow to allocate: allocate once, reuse.
// Source: "separable convolution with CUDA", section 一 (pinned host memory).
// Run: build/bin/separable_conv_02_pinned
#include "01_naive.cu"  // row_pass_global, column_pass_global and their launcher

namespace separable_conv::pinned {

const Step kStep{"separable_conv/02_pinned", naive::launch,
                 "step 01's kernels; host buffers from cudaMallocHost", nullptr, Transfers::pinned};
LADDER_STEP(kStep);

}  // namespace separable_conv::pinned
