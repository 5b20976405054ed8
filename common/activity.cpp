#include "common/activity.h"

#include "common/check.h"
#include "common/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#if LADDER_HAVE_CUPTI
#include <cupti.h>
#endif

namespace ladder {

namespace {

// What the CUPTI buffers delivered, kept for the process: records, and the external correlation
// (CUDA call -> region) that ties them to regions. CUPTI may deliver from a thread of its own.
struct Store {
  std::mutex lock;
  std::vector<ActivityRecord> records;
  std::map<uint32_t, uint64_t> region_of_call;  // correlationId -> region
};
Store& store() {
  static Store s;
  return s;
}

#if LADDER_HAVE_CUPTI
// The newest record layouts of the CUPTI this was compiled with (the library of the same toolkit
// writes them).
#if CUPTI_API_VERSION >= 130000
using KernelRecord = CUpti_ActivityKernel10;
using MemcpyRecord = CUpti_ActivityMemcpy6;
#else
using KernelRecord = CUpti_ActivityKernel9;
using MemcpyRecord = CUpti_ActivityMemcpy5;
#endif
using MemsetRecord = CUpti_ActivityMemset4;

constexpr size_t kBufferBytes = size_t(8) << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

const char* copy_kind(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "memcpy DtoD";
    default: return "memcpy";
  }
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  Store& s = store();
  std::lock_guard<std::mutex> guard(s.lock);
  CUpti_Activity* rec = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    ActivityRecord r;
    uint32_t call = 0;
    switch (rec->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto* k = reinterpret_cast<const KernelRecord*>(rec);
        r = {ActivityRecord::kernel, k->name ? k->name : "kernel", k->start, k->end, k->streamId, 0, 0};
        call = k->correlationId;
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const MemcpyRecord*>(rec);
        r = {ActivityRecord::memcpy, copy_kind(m->copyKind), m->start, m->end, m->streamId, m->bytes, 0};
        call = m->correlationId;
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const MemsetRecord*>(rec);
        r = {ActivityRecord::memset, "memset", m->start, m->end, m->streamId, m->bytes, 0};
        call = m->correlationId;
        break;
      }
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(rec);
        s.region_of_call[e->correlationId] = e->externalId;
        continue;
      }
      default:
        continue;
    }
    r.region = call;  // resolved to a region on reading (its correlation record may come later)
    s.records.push_back(std::move(r));
  }
  std::free(buffer);
}

std::string cupti_error(CUptiResult r) {
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  return text ? text : "CUPTI error " + std::to_string(static_cast<int>(r));
}
#endif

}  // namespace

uint64_t union_ns(std::vector<std::pair<uint64_t, uint64_t>> v) {
  std::sort(v.begin(), v.end());
  uint64_t total = 0, run_start = 0, run_end = 0;
  bool open = false;
  for (const auto& [a, b] : v) {
    if (b <= a) continue;
    if (!open || a > run_end) {
      if (open) total += run_end - run_start;
      run_start = a;
      run_end = b;
      open = true;
    } else {
      run_end = std::max(run_end, b);
    }
  }
  if (open) total += run_end - run_start;
  return total;
}

GpuActivity& GpuActivity::get() {
  static GpuActivity a;
  return a;
}

GpuActivity::GpuActivity() {
  if (const char* off = std::getenv("LADDER_NO_CUPTI"); off && *off) {
    why_ = "LADDER_NO_CUPTI is set";
    return;
  }
#if LADDER_HAVE_CUPTI
  CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  // The API kinds too: CUPTI writes an external correlation record beside each API record, so
  // without them no record would name its region.
  for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                  CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
                                  CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION})
    if (r == CUPTI_SUCCESS) r = cuptiActivityEnable(kind);
  available_ = r == CUPTI_SUCCESS;
  if (!available_) why_ = "CUPTI could not start (" + cupti_error(r) + "): a profiler or sanitizer may hold it";
#else
  why_ = "this build has no CUPTI (the toolkit's CUDA::cupti was not found)";
#endif
}

uint64_t GpuActivity::open_region() {
  if (!available_) return 0;
  open_ = next_region_++;
  window_[open_] = {now_ns(), 0};
#if LADDER_HAVE_CUPTI
  if (cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, open_) != CUPTI_SUCCESS) {
    available_ = false;
    why_ = "CUPTI refused an external correlation id";
    open_ = 0;
  }
#endif
  return open_;
}

void GpuActivity::close_region() {
  if (!open_) return;
#if LADDER_HAVE_CUPTI
  uint64_t last = 0;
  cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
#endif
  open_ = 0;
}

void GpuActivity::region_finished(uint64_t region) {
  auto it = window_.find(region);
  if (it != window_.end()) it->second.second = now_ns();
}

void GpuActivity::flush() {
#if LADDER_HAVE_CUPTI
  if (available_) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
#endif
}

std::vector<ActivityRecord> GpuActivity::records() {
  flush();
  Store& s = store();
  std::lock_guard<std::mutex> guard(s.lock);
  std::vector<ActivityRecord> out = s.records;
  for (ActivityRecord& r : out) {
    if (r.kind == ActivityRecord::host_range) continue;
    const auto it = s.region_of_call.find(static_cast<uint32_t>(r.region));
    r.region = it == s.region_of_call.end() ? 0 : it->second;
  }
  return out;
}

std::vector<double> GpuActivity::busy_ms(const std::vector<uint64_t>& regions) {
  std::vector<double> ms(regions.size(), NAN);
  if (!available_ || regions.empty()) return ms;
  std::map<uint64_t, std::vector<std::pair<uint64_t, uint64_t>>> spans;
  for (const uint64_t id : regions) spans[id];
  const std::vector<ActivityRecord> all = records();
  for (const ActivityRecord& r : all) {
    auto it = spans.find(r.region);
    if (it != spans.end() && r.region != 0 && r.kind != ActivityRecord::host_range)
      it->second.emplace_back(r.start_ns, r.end_ns);
  }
  for (size_t i = 0; i < regions.size(); ++i) {
    std::vector<std::pair<uint64_t, uint64_t>> v = spans[regions[i]];
    const auto w = window_.find(regions[i]);
    if (v.empty() && w != window_.end() && w->second.second > w->second.first) {
      // No record names the region (a CUPTI that writes no external correlation for this API):
      // the records that ran between its opening and the moment its work was known complete.
      for (const ActivityRecord& r : all)
        if (r.kind != ActivityRecord::host_range && r.start_ns >= w->second.first && r.end_ns <= w->second.second)
          v.emplace_back(r.start_ns, r.end_ns);
    }
    if (regions[i] != 0 && !v.empty()) ms[i] = union_ns(v) * 1e-6;
  }
  return ms;
}

uint64_t GpuActivity::now_ns() {
#if LADDER_HAVE_CUPTI
  uint64_t t = 0;
  if (get().available() && cuptiGetTimestamp(&t) == CUPTI_SUCCESS) return t;
#endif
  return 0;
}

namespace {
bool& trace_flag() {
  static bool on = false;
  return on;
}
}  // namespace

void GpuActivity::request_trace() { trace_flag() = true; }
bool GpuActivity::trace_requested() { return trace_flag(); }

void GpuActivity::host_range(const std::string& name, uint64_t start_ns, uint64_t end_ns) {
  if (!trace_flag() || start_ns == 0) return;
  Store& s = store();
  std::lock_guard<std::mutex> guard(s.lock);
  s.records.push_back({ActivityRecord::host_range, name, start_ns, end_ns, 0, 0, 0});
}

void GpuActivity::write_trace(const std::string& path) {
  const std::vector<ActivityRecord> all = records();
  uint64_t t0 = UINT64_MAX;
  for (const ActivityRecord& r : all) t0 = std::min(t0, r.start_ns);
  std::ofstream f(path);
  if (!f) throw CudaError("--trace: cannot write " + path);
  // Chrome trace events: "X" = a complete event with a start (ts) and a duration (dur), in us.
  f << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  f << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"host (phases)\"}},\n";
  f << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,\"args\":{\"name\":\"GPU\"}}";
  std::set<uint32_t> streams;
  for (const ActivityRecord& r : all) {
    const bool host = r.kind == ActivityRecord::host_range;
    if (!host) streams.insert(r.stream);
    const char* cat = host ? "phase" : r.kind == ActivityRecord::kernel ? "kernel" : r.kind == ActivityRecord::memcpy ? "memcpy" : "memset";
    char buf[128];
    std::snprintf(buf, sizeof buf, "\"ts\":%.3f,\"dur\":%.3f", (r.start_ns - t0) * 1e-3, (r.end_ns - r.start_ns) * 1e-3);
    f << ",\n{\"name\":\"" << JsonWriter::escape(r.name) << "\",\"cat\":\"" << cat << "\",\"ph\":\"X\"," << buf
      << ",\"pid\":" << (host ? 1 : 2) << ",\"tid\":" << (host ? 0 : r.stream) << ",\"args\":{\"bytes\":" << r.bytes
      << ",\"region\":" << r.region << "}}";
  }
  for (uint32_t s : streams)
    f << ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":2,\"tid\":" << s << ",\"args\":{\"name\":\"stream " << s << "\"}}";
  f << "\n]}\n";
  if (!f) throw CudaError("--trace: writing " + path + " failed");
}

}  // namespace ladder
