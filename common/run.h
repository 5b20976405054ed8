// The one shape every folder's harness measures with: a checked run, the timed runs, a final
// checked run. A folder describes each thing it times as a Phase (the kernels alone; end to end
// with transfers; the time until a host-side answer exists) and hands it to measure_phase():
//
//   1. checked run  prepare(), poison() every output, run once on the host clock (that time decides
//                   how much warm-up follows), check() against the reference; then the dump.
//   2. timed runs   warm-up, then reps of run() within the time budget; prepare() before each, outside
//                   the timed region (restoring an in-place input, moving managed pages back).
//   3. final run    prepare(), poison() again, run once more, check() again. A step whose later
//                   launches differ from its first (a device counter it forgot to reset, an output
//                   left over from an earlier launch) fails here even though its first run passed.
//
// Timing: Clock::gpu, the GPU's own records of what each repetition launched on `stream` (with the
// events around it as call_ms; common/timing.h); Clock::events, the events alone, for a region whose
// answer also needs host work enqueued on the stream (cudaLaunchHostFunc: reduction's host finish),
// which no GPU record covers; Clock::host, the host's steady clock, for work that returns only when
// its result is complete (end-to-end runs, CPU steps).
#pragma once

#include "common/cli.h"
#include "common/report.h"
#include "common/timing.h"
#include "common/verify.h"

#include <cuda_runtime.h>

#include <functional>
#include <string>

namespace ladder {

enum class Clock { gpu, events, host };

struct Phase {
  std::string name;                       // "kernel", "end-to-end": NVTX ranges and messages
  Work run;                               // what is timed
  Work poison;                            // every output made to look unwritten (NaN, -1)
  std::function<VerifyReport()> check;    // read the output back, compare with the reference
  Work prepare;                           // optional: before every run, untimed
  Clock clock = Clock::gpu;
  cudaStream_t stream = nullptr;          // Clock::gpu: the stream `run` enqueues on
};

// Runs the three stages above, merges both checks into res.check (printing mismatches with the
// step id), calls `after_checked_run` (the --dump) once after the first check, and returns the
// timed statistics. With --no-verify the checks and the final run are skipped.
Stats measure_phase(Result& res, const Phase& phase, const CommonOptions& opt,
                    const Work& after_checked_run = {});

// A ceiling from a library (cuBLAS, CUB) that returns a wrong answer is not a ceiling: throws
// CudaError (exit 3) naming the library and the first mismatches.
void require_correct_ceiling(const VerifyReport& check, const std::string& library);

}  // namespace ladder
