// Timing. A GPU region (time_gpu) is timed twice over: by the GPU's own records of the work it
// launched (CUPTI, common/activity.h: the union of the kernels', copies' and memsets' execution
// intervals — kernel_ms) and by CUDA events around it on its stream (what a caller waits, host
// enqueue and launch gaps included — call_ms). Where CUPTI is unavailable, or a timed repetition left
// no record, the events give both, and the Stats say so. CPU work and end-to-end times that include
// transfers use the host's steady clock. Warm-up first, then repetitions until --reps or the time
// budget runs out (so a <<<1,1>>> step takes one or two reps and the ladder stays fast), and the
// median, min and max (time_loop).
#pragma once

#include "common/cli.h"

#include <cuda_runtime.h>

#include <functional>
#include <string>
#include <vector>

namespace ladder {

struct Stats {
  double median = 0, min = 0, max = 0;  // milliseconds
  int reps = 0;
  // The clock: "cupti" (the GPU's records of a region's work), "events" (a GPU region timed by its
  // events: asked to, or CUPTI unavailable or missing a record, GpuActivity::why_unavailable),
  // "host" (the steady clock).
  std::string source = "host";
  // GPU regions: the CUDA events around each timed rep (call_ms), summarized alike; call_reps == 0
  // for host regions.
  double call_median = 0, call_min = 0, call_max = 0;
  int call_reps = 0;
};

// Median, min and max of the samples (ms), reps their count. Median of an even count is the mean of
// the two middle values. Empty input gives reps == 0 and zeros.
Stats summarize(std::vector<double> samples_ms);

struct TimingPlan {
  int warmup = 2;
  int reps = 20;
  double budget_ms = 1500.0;
  static TimingPlan from(const CommonOptions& o) { return {o.warmup, o.reps, o.budget_ms}; }
  // The checked run that precedes timing is itself a warm-up; when it already took a quarter of the
  // budget (a <<<1,1>>> step), further warm-up only costs time.
  TimingPlan after_first_run(double first_run_ms) const {
    TimingPlan p = *this;
    if (first_run_ms >= budget_ms / 4) p.warmup = 0;
    return p;
  }
};

// Work to time, and optional work to do before each run outside the timed region (restoring an
// in-place input, making managed pages host-resident again).
using Work = std::function<void()>;

// GPU region: `work` enqueues on `stream` (and on streams that join it); each rep is bracketed by two
// events on that stream and is a CUPTI region. The result's median/min/max are the GPU's own time
// (source "cupti"), its call_* the events'; where any timed rep has no GPU record (or CUPTI is
// unavailable), all of them are the events' (source "events"). The budget counts the events' time.
// gpu_records = false: the events give the time (source "events"), for a region whose work includes
// host functions on the stream.
Stats time_gpu(const Work& work, cudaStream_t stream, const TimingPlan& plan,
               const Work& before_each = {}, bool gpu_records = true);

// Host region: `work` must return only when its result is complete (synchronize inside it).
Stats time_host(const Work& work, const TimingPlan& plan, const Work& before_each = {});

// One run on the host clock, no warm-up: the checked run, whose time decides the warm-up that follows.
inline double time_once_ms(const Work& work) { return time_host(work, TimingPlan{0, 1, 0}).median; }

// Effective bandwidth: `bytes` moved in `ms` milliseconds, in GB/s (10^9 bytes per second).
inline double gbps(double bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }

// The loop time_gpu and time_host share: `measure_once` returns one sample in ms. Up to plan.warmup
// untimed samples, stopping once they add up to a quarter of plan.budget_ms; then up to plan.reps
// timed ones (at least one), stopping once they add up to plan.budget_ms. `before_each` runs before
// every sample, warm-up included, outside it.
Stats time_loop(const std::function<double()>& measure_once, const TimingPlan& plan,
                const Work& before_each);

}  // namespace ladder
