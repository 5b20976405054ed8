// The GPU's own record of what ran: CUPTI's activity API (part of the CUDA toolkit, CUDA::cupti; it
// needs no profiler permission, unlike hardware counters). Every kernel, copy and memset the
// process launches is recorded with the GPU's start and end timestamps, its stream and its name.
//
// kernel_ms comes from here (docs/measuring.md): a timed repetition is a *region*; every CUDA call
// made on this thread between open_region() and close_region() is tagged with the region's id
// (CUPTI's external correlation), so the records of the work it launched — ours, cuBLAS's, CUB's
// — are found again, and the region's GPU time is the union of their [start, end) intervals: the
// time the GPU spent executing that work, without the host's enqueue time or the gaps between
// launches (those are in call_ms, the CUDA events around the region).
//
// Where CUPTI cannot start (a build without it, or a tool that already holds it), or where
// LADDER_NO_CUPTI is set to anything non-empty (scripts/sanitize.sh sets it: the sanitizer's own
// instrumentation should not share the process with CUPTI's), available() is false,
// why_unavailable() says why, and the timing falls back to the events; the record says which
// (kernel_ms_source).
//
// --trace FILE writes every record as a Chrome/Perfetto trace (chrome://tracing, ui.perfetto.dev):
// one row per stream, and the step's phases (its NVTX ranges) on a host row above them. Without
// CUPTI there are no records and no phase times: the trace holds no kernels, copies or phases.
// Source: CUPTI documentation, "Activity API" and "External Correlation".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ladder {

// One thing the GPU did, or one host range (a phase of the step).
struct ActivityRecord {
  enum Kind { kernel, memcpy, memset, host_range } kind = kernel;
  std::string name;         // kernel name (mangled), "memcpy HtoD", "memset", or the range's name
  uint64_t start_ns = 0, end_ns = 0;  // CUPTI timestamps: one clock for GPU and host records
  uint32_t stream = 0;      // the stream's id (0 for host ranges)
  uint64_t bytes = 0;       // copies and memsets
  uint64_t region = 0;      // the region that launched it (0: none)
};

class GpuActivity {
 public:
  // Recording starts on first use: call it before the work to be measured.
  static GpuActivity& get();

  bool available() const { return available_; }
  // A timed repetition without records: the events timed it (why_unavailable says so from now on;
  // available() stays true).
  void note_incomplete() { why_ = "a timed repetition had no activity record"; }
  const std::string& why_unavailable() const { return why_; }

  // Tags every CUDA call of this thread until close_region(); returns the region's id (0 when
  // CUPTI is unavailable). Regions do not nest.
  uint64_t open_region();
  void close_region();
  // Called once the region's work is known complete (after the stream's event): the end of the
  // time window its records must lie in, used only where no record names the region.
  void region_finished(uint64_t region);

  // The GPU time of each closed region in ms: the union of its records' intervals. NaN for a
  // region when CUPTI is unavailable or it has no record (nothing was launched, a record was lost).
  std::vector<double> busy_ms(const std::vector<uint64_t>& regions);

  // A host range for the trace (the step's NVTX phases); ignored unless tracing.
  void host_range(const std::string& name, uint64_t start_ns, uint64_t end_ns);
  static uint64_t now_ns();  // CUPTI's clock (0 when unavailable)

  // --trace FILE (the CLI calls request_trace): the phases are recorded as host ranges too, and
  // write_trace() writes every record so far as a Chrome/Perfetto trace (CudaError if it cannot).
  static void request_trace();
  static bool trace_requested();
  void write_trace(const std::string& path);

  // Every record delivered so far (flushes first).
  std::vector<ActivityRecord> records();

 private:
  GpuActivity();
  void flush();
  bool available_ = false;
  std::string why_;
  uint64_t next_region_ = 1;
  uint64_t open_ = 0;
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> window_;  // region -> (opened, finished) ns
};

// The union of intervals' total length in ns (overlaps counted once).
uint64_t union_ns(std::vector<std::pair<uint64_t, uint64_t>> intervals);

}  // namespace ladder
