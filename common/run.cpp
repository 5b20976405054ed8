#include "common/run.h"

#include "common/check.h"
#include "common/nvtx.h"

#include <sstream>

namespace ladder {

namespace {

void run_to_completion(const Phase& p) {
  p.run();
  if (p.clock != Clock::host) CUDA_CHECK(cudaStreamSynchronize(p.stream));
}

void checked_once(Result& res, const Phase& p, const CommonOptions& opt, const char* which) {
  if (!opt.verify || !p.check) return;
  VerifyReport v = p.check();
  v.print(stderr, res.step.id + ": " + p.name + ", " + which);
  res.check.merge(v);
}

}  // namespace

Stats measure_phase(Result& res, const Phase& p, const CommonOptions& opt,
                    const Work& after_checked_run) {
  const TimingPlan plan = TimingPlan::from(opt);
  double first_ms = 0;
  {
    NvtxRange r(p.name + ": checked run");
    if (p.prepare) p.prepare();
    p.poison();
    first_ms = time_once_ms([&] { run_to_completion(p); });
    checked_once(res, p, opt, "checked run");
    if (after_checked_run) after_checked_run();
  }
  Stats timed;
  {
    NvtxRange r(p.name + ": timed");
    const TimingPlan after = plan.after_first_run(first_ms);
    timed = p.clock == Clock::gpu      ? time_gpu(p.run, p.stream, after, p.prepare)
            : p.clock == Clock::events ? time_gpu(p.run, p.stream, after, p.prepare, /*gpu_records=*/false)
                                  : time_host(p.run, after, p.prepare);
  }
  if (opt.verify && p.check) {
    NvtxRange r(p.name + ": final checked run");
    if (p.prepare) p.prepare();
    p.poison();
    run_to_completion(p);
    checked_once(res, p, opt, "final run after timing");
  }
  return timed;
}

void require_correct_ceiling(const VerifyReport& check, const std::string& library) {
  if (check.ok) return;
  std::ostringstream msg;
  msg << "the ceiling's " << library << " result is wrong (" << check.mismatches << " of "
      << check.checked << " elements)";
  for (const auto& line : check.first_bad) msg << "; " << line;
  throw CudaError(msg.str());
}

}  // namespace ladder
