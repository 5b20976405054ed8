// reduction: the int64 sum of n int32 values (docs/ladders.md; the posts "【CUDA】Branch Divergence and
// Unrolling Loop" and, for the warp shuffle, "【CUDA】Nsight profile驱动的CUDA优化").
//
// What every step of this folder shares: the --n flag (default 2^28, the post's size), the input
// (seeded, uniform in 0..255 like the post's rand() & 0xFF), the CPU reference (an OpenMP loop into
// an int64), the exact check of the int64 total, the bytes the problem must move (4n: each value read
// once) and the ceiling (cub::DeviceReduce::Sum on the same input, measured in the same process).
//
// A step is one of two kinds, and the harness (reduction.cu) owns everything around its launch:
//
//   block partials   the posts' shape (steps 01-07). One thread block reduces one slice of
//                    `threads * data_blocks` consecutive values IN PLACE in global memory and writes
//                    its int32 sum to partials[blockIdx.x]. The harness computes the grid, restores
//                    the input between runs (outside the timed region), and finishes on the host:
//                    partials -> pinned memory, then a host loop into an int64. Both are enqueued on
//                    the step's stream (cudaMemcpyAsync + cudaLaunchHostFunc). kernel_ms is the
//                    kernel alone; total_ms runs until the total exists on the host, as in the post,
//                    and is what the metric and the ceiling (CUB's time to its total) compare.
//   device total     one call that leaves the int64 total in device memory (00_cub, 08). It may
//                    ask for a scratch workspace, allocated and zeroed once, outside timing; a step
//                    that needs it zeroed at every launch (a counter) must leave it zeroed itself.
//
// Why int32 partials are safe: a block partial sums at most threads * data_blocks values of at most
// kMaxValue, a bound fixed by the step and independent of n. Each step static_asserts it with
// fits_int32_partial(), and run() checks it again before launching. The total is always int64.
#pragma once

#include "common/buffers.h"
#include "common/device.h"
#include "common/step.h"

#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>

namespace reduction {

constexpr int64_t kDefaultN = int64_t(1) << 28;  // the post's 1 << 28 (1 GiB of int32)
constexpr int32_t kMaxValue = 255;               // inputs are uniform in 0..kMaxValue (rand() & 0xFF)

// True when a sum of `values` inputs can never overflow an int32.
constexpr bool fits_int32_partial(int64_t values) { return values <= INT32_MAX / kMaxValue; }

// The grid of a block-partials step, computed by the harness.
struct BlockGrid {
  unsigned blocks;           // ceil(n / values_per_block), one partial each
  int threads;               // blockDim.x
  int64_t values_per_block;  // threads * data_blocks
};

// Block-partials steps: reduce `data` (n values, modified in place) into partials[0 .. grid.blocks).
using PartialsFn = void (*)(int* data, int64_t n, int* partials, const BlockGrid& grid,
                            cudaStream_t stream);

// Device-total steps: *total = sum of data[0 .. n). `workspace` holds workspace_bytes(dev, n) bytes.
struct Workspace {
  void* ptr;
  size_t bytes;
};
using TotalFn = void (*)(const ladder::DeviceInfo& dev, const int* data, int64_t n, int64_t* total,
                         Workspace workspace, cudaStream_t stream);
using WorkspaceBytesFn = size_t (*)(const ladder::DeviceInfo& dev, int64_t n);

// A step, declared in its file as an aggregate: block-partials steps give the first four fields,
//   const Step kStep{"reduction/04_unroll2", launch, kThreads, kDataBlocks};
// device-total steps leave them empty and give the last two,
//   const Step kStep{"reduction/08_grid_stride_int4", /*partials=*/nullptr, 0, 0, launch, workspace_bytes};
struct Step {
  const char* id;                        // "reduction/05_unroll8_warps"
  PartialsFn partials = nullptr;         // block partials
  int threads = 0;
  int data_blocks = 1;                   // data blocks (of `threads` values) each thread block reduces
  TotalFn total = nullptr;               // device total
  WorkspaceBytesFn workspace_bytes = nullptr;
};

// The folder's main: flags, input, reference, checks, timing, ceiling, report.
int run(const Step& step, int argc, char** argv);

// The reference: an OpenMP loop into an int64, deliberately not the code of any step.
int64_t reference_sum(const int32_t* x, int64_t n);

// cub::DeviceReduce::Sum from int32 into an int64 (CUB's accumulator is then int64 as well; see
// reduction.cu). Step 00 and the ceiling. `temp` holds cub_temp_bytes(n) bytes.
size_t cub_temp_bytes(int64_t n);
void cub_sum(const int* data, int64_t n, int64_t* total, void* temp, size_t temp_bytes,
             cudaStream_t stream);

// Bytes the problem must move: every value read once (the one int64 written is negligible).
inline double min_bytes(int64_t n) { return 4.0 * static_cast<double>(n); }

#if defined(__CUDACC__)
// How many of a block's `span` values exist: all of them, except in the last block when n is not a
// multiple of the span. Kernels guard every access with it, so each step sums every element at
// every n (the posts drop the tail) and never reads past the array.
__device__ __forceinline__ int values_in_block(int64_t n, int64_t block_start, int span) {
  const int64_t left = n - block_start;
  return left < span ? static_cast<int>(left) : span;
}
#endif

}  // namespace reduction
