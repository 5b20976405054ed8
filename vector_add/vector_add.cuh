// vector_add: r = x + y over n floats (the post "CUDA编程入门"; docs/ladders.md).
//
// What every step of this folder shares: the --n flag (default 100,000,000, the post's size), the
// inputs (seeded, uniform in [-1, 1)), the CPU reference (a plain serial loop), the exact check
// (one IEEE addition per element, so the GPU must match bit for bit), the bytes the problem must
// move (two reads and one write per element) and the ceiling (the copy ceiling of common/).
//
// A step supplies a Step: its kernel launcher and, for the steps that are about memory rather than
// kernels, how host memory is allocated and how an end-to-end run moves it (pinned, streams,
// managed, mapped). The harness (vector_add.cu) verifies and times two things for every step:
//   kernel      the launch alone, inputs already resident on the device;
//   end-to-end  host inputs -> host result: H2D copies, kernel, D2H copy (what the post's tables add up).
// It also times the same end-to-end path with the kernel left out — the step's own transfer floor.
#pragma once

#include "common/buffers.h"
#include "common/device.h"
#include "common/step.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace vector_add {

constexpr int64_t kDefaultN = 100'000'000;

// The three arrays of one run: on the device, or host memory the device can address.
struct Arrays {
  float* x;
  float* y;
  float* r;
};

// The streams a step asked for (Step::streams); streams[0] is the one the harness times on.
struct Streams {
  const cudaStream_t* s;
  int count;
};

// Enqueue r = x + y on `stream`. The part every GPU step writes. The CPU step's loop has the same
// shape: it gets host arrays and returns when r is complete.
using LaunchFn = void (*)(const ladder::DeviceInfo& dev, Arrays arrays, int64_t n,
                          cudaStream_t stream);

// Host inputs -> host result through the device; returns once `host.r` holds the result.
// With launch == nullptr it must do the same transfers and nothing else (the transfer floor).
using EndToEndFn = void (*)(const ladder::DeviceInfo& dev, Arrays host, Arrays device, int64_t n,
                            LaunchFn launch, Streams streams);

// The end-to-end path of the post's first steps: cudaMemcpy x and y in, launch, cudaMemcpy r out,
// all on one stream.
void copy_in_launch_copy_out(const ladder::DeviceInfo& dev, Arrays host, Arrays device, int64_t n,
                             LaunchFn launch, Streams streams);

enum class Runs { on_gpu, on_cpu };

// A step, declared in its file as an aggregate, e.g.
//   const Step kStep{"vector_add/06_streams", grid_stride::launch, Runs::on_gpu, HostKind::pinned,
//                    pipelined_end_to_end, kStreams};
struct Step {
  const char* id;                                           // "vector_add/05_pinned"
  LaunchFn launch;                                          // the kernel launcher (or the CPU loop)
  Runs runs = Runs::on_gpu;
  ladder::HostKind host_memory = ladder::HostKind::pageable;  // what the host arrays are
  EndToEndFn end_to_end = copy_in_launch_copy_out;          // how a host-to-host run moves them
  int streams = 1;                                          // streams the end-to-end path uses
};

// The folder's main: flags, inputs, reference, checks, timing, ceilings, report.
int run(const Step& step, int argc, char** argv);

// The reference: a plain serial loop, deliberately not the code of any step.
void reference_add(const float* x, const float* y, float* r, int64_t n);

// Bytes the problem must move: x and y read once, r written once.
inline double min_bytes(int64_t n) { return 12.0 * static_cast<double>(n); }

}  // namespace vector_add
