#include "common/timing.h"

#include "common/activity.h"
#include "common/check.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace ladder {

Stats summarize(std::vector<double> s) {
  Stats st;
  st.reps = static_cast<int>(s.size());
  if (s.empty()) return st;
  std::sort(s.begin(), s.end());
  size_t n = s.size();
  st.median = (n % 2) ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  st.min = s.front();
  st.max = s.back();
  return st;
}

Stats time_loop(const std::function<double()>& measure_once, const TimingPlan& plan,
                const Work& before_each) {
  // Warm-up: stop early once it has used a quarter of the budget (a seconds-long step needs none).
  double spent = 0;
  for (int i = 0; i < plan.warmup && spent < plan.budget_ms / 4; ++i) {
    if (before_each) before_each();
    spent += measure_once();
  }
  std::vector<double> samples;
  double total = 0;
  for (int i = 0; i < std::max(plan.reps, 1); ++i) {
    if (before_each) before_each();
    double ms = measure_once();
    samples.push_back(ms);
    total += ms;
    if (total >= plan.budget_ms) break;  // at least one sample is always kept
  }
  return summarize(samples);
}

namespace {
struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() {
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
};
}  // namespace

Stats time_gpu(const Work& work, cudaStream_t stream, const TimingPlan& plan,
               const Work& before_each, bool gpu_records) {
  EventPair ev;
  GpuActivity& activity = GpuActivity::get();
  std::vector<uint64_t> regions;  // one per run, warm-up included
  // The region opens before the start event and closes after the stop event, so its bookkeeping is
  // not inside call_ms; only the work launches between the events.
  auto once = [&]() -> double {
    regions.push_back(activity.open_region());
    CUDA_CHECK(cudaEventRecord(ev.start, stream));
    work();
    CUDA_CHECK(cudaEventRecord(ev.stop, stream));
    activity.close_region();
    CUDA_CHECK(cudaEventSynchronize(ev.stop));
    activity.region_finished(regions.back());
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, ev.start, ev.stop));
    return ms;
  };
  const Stats events = time_loop(once, plan, before_each);
  // The timed reps are the last events.reps runs (the warm-up came first).
  const std::vector<uint64_t> timed(regions.end() - events.reps, regions.end());
  const std::vector<double> gpu = gpu_records ? activity.busy_ms(timed) : std::vector<double>{};
  const bool complete = !gpu.empty() && std::none_of(gpu.begin(), gpu.end(), [](double ms) { return std::isnan(ms); });
  Stats s = complete ? summarize(gpu) : events;
  s.source = complete ? "cupti" : "events";
  if (!complete && gpu_records && activity.available()) activity.note_incomplete();
  s.call_median = events.median;
  s.call_min = events.min;
  s.call_max = events.max;
  s.call_reps = events.reps;
  return s;
}

Stats time_host(const Work& work, const TimingPlan& plan, const Work& before_each) {
  // Each repetition is a region too (when CUPTI runs), so a trace can tell the repetitions of an
  // end-to-end phase apart; the time is the host's.
  GpuActivity& activity = GpuActivity::get();
  auto once = [&]() -> double {
    const uint64_t region = activity.open_region();
    auto t0 = std::chrono::steady_clock::now();
    work();
    auto t1 = std::chrono::steady_clock::now();
    activity.close_region();
    activity.region_finished(region);
    return std::chrono::duration<double, std::milli>(t1 - t0).count();
  };
  return time_loop(once, plan, before_each);
}

}  // namespace ladder
