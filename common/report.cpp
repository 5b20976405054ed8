#include "common/report.h"

#include "common/activity.h"
#include "common/check.h"

#include <cctype>
#include <cmath>
#include <ctime>
#include <stdexcept>

namespace ladder {

StepInfo StepInfo::from_id(const std::string& id) {
  StepInfo s;
  s.id = id;
  auto slash = id.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 >= id.size())
    throw std::invalid_argument("step id must be folder/NN_name: " + id);
  s.folder = id.substr(0, slash);
  s.name = id.substr(slash + 1);
  std::string rest = s.name;
  s.series = "main";
  auto first_underscore = rest.find('_');
  if (first_underscore != std::string::npos && first_underscore > 0 &&
      !std::isdigit(static_cast<unsigned char>(rest[0]))) {
    s.series = rest.substr(0, first_underscore);
    rest = rest.substr(first_underscore + 1);
  }
  size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
  if (digits == 0 || digits >= rest.size() || rest[digits] != '_')
    throw std::invalid_argument("step id must be folder/NN_name: " + id);
  s.index = std::stoi(rest.substr(0, digits));
  return s;
}

double Result::pct_of_ceiling() const {
  if (!ceiling || ceiling->value <= 0) return NAN;
  return 100.0 * metric_value / ceiling->value;
}

std::string JsonWriter::escape(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      case '\r': o += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += static_cast<char>(c);
        }
    }
  }
  return o;
}

void JsonWriter::key(const std::string& k) {
  if (!first_.empty()) {
    if (!first_.back()) out_ += ",";
    first_.back() = false;
  }
  if (!k.empty()) out_ += "\"" + escape(k) + "\":";
}

JsonWriter& JsonWriter::begin_object(const std::string& k) {
  key(k);
  out_ += "{";
  first_.push_back(true);
  return *this;
}
JsonWriter& JsonWriter::end_object() {
  out_ += "}";
  first_.pop_back();
  return *this;
}
JsonWriter& JsonWriter::field(const std::string& k, const std::string& v) {
  key(k);
  out_ += "\"" + escape(v) + "\"";
  return *this;
}
JsonWriter& JsonWriter::field(const std::string& k, const char* v) { return field(k, std::string(v)); }
JsonWriter& JsonWriter::field(const std::string& k, double v) {
  key(k);
  if (!std::isfinite(v)) {
    out_ += "null";
  } else {
    // Whole numbers below 2^53 (byte and FLOP counts, sizes) exactly; other values to 6 digits.
    char buf[40];
    const bool whole = std::fabs(v) < 9007199254740992.0 && v == std::floor(v);
    std::snprintf(buf, sizeof buf, whole ? "%.0f" : "%.6g", v);
    out_ += buf;
  }
  return *this;
}
JsonWriter& JsonWriter::field(const std::string& k, int64_t v) {
  key(k);
  out_ += std::to_string(v);
  return *this;
}
JsonWriter& JsonWriter::field(const std::string& k, bool v) {
  key(k);
  out_ += v ? "true" : "false";
  return *this;
}
JsonWriter& JsonWriter::null_field(const std::string& k) {
  key(k);
  out_ += "null";
  return *this;
}

namespace {
// The day the record was made, UTC, "2026-11-21".
std::string utc_date() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

void stats_object(JsonWriter& j, const std::string& k, const Stats& s) {
  j.begin_object(k)
      .field("median", s.median)
      .field("min", s.min)
      .field("max", s.max)
      .field("reps", s.reps)
      .end_object();
}
}  // namespace

std::string to_json(const Result& r) {
  JsonWriter j;
  j.begin_object()
      .field("step", r.step.id)
      .field("folder", r.step.folder)
      .field("series", r.step.series)
      .field("index", r.step.index)
      .field("device", r.device.name);
  if (r.device.profile.empty()) j.null_field("device_profile");
  else j.field("device_profile", r.device.profile);
  j.field("cc", r.device.present ? std::to_string(r.device.cc_major) + "." + std::to_string(r.device.cc_minor)
                                 : std::string("none"))
      .field("cuda", cuda_version_string(r.device.runtime_version))
      .field("date", utc_date());
  j.begin_object("size");
  for (const auto& [k, v] : r.size) j.field(k, v);
  j.end_object();
  if (r.verify_skipped) {
    j.null_field("verified").null_field("max_err");
  } else {
    j.field("verified", r.check.ok).field("max_err", r.check.max_err);
  }
  stats_object(j, "kernel_ms", r.kernel);
  // Where kernel_ms comes from (docs/measuring.md): "cupti", "events" (CUPTI unavailable) or "host".
  j.field("kernel_ms_source", r.kernel.source);
  if (r.kernel.call_reps > 0) {
    j.begin_object("call_ms")
        .field("median", r.kernel.call_median)
        .field("min", r.kernel.call_min)
        .field("max", r.kernel.call_max)
        .field("reps", r.kernel.call_reps)
        .end_object();
  } else {
    j.null_field("call_ms");
  }
  if (r.total) stats_object(j, "total_ms", *r.total);
  else j.null_field("total_ms");
  j.begin_object("metric").field("value", r.metric_value).field("unit", r.metric_unit).end_object();
  j.field("metric_from", r.metric_from);
  if (r.ceiling) {
    j.begin_object("ceiling")
        .field("name", r.ceiling->name)
        .field("value", r.ceiling->value)
        .field("unit", r.ceiling->unit)
        .end_object();
  } else {
    j.null_field("ceiling");
  }
  j.field("pct_of_ceiling", r.pct_of_ceiling());
  // The work and the spec peaks (common/device.h): a roofline point, and how far it is from the
  // datasheet, named apart from the measured ceiling.
  const double ms = r.metric_from == "total_ms" && r.total ? r.total->median : r.kernel.median;
  j.begin_object("work").field("min_bytes", r.min_bytes).field("flops", r.flops).end_object();
  if (r.device.present) {
    const double tf32 = spec_tf32_gflops(r.device);
    j.begin_object("spec")
        .field("dram_gbps", r.device.theoretical_gbps)
        .field("fp32_gflops", spec_fp32_gflops(r.device));
    if (tf32 > 0) j.field("tf32_gflops", tf32);
    else j.null_field("tf32_gflops");
    j.field("sm_clock_mhz", r.device.sm_clock_mhz).end_object();
    if (r.min_bytes > 0 && ms > 0) j.field("pct_of_spec_dram", 100.0 * gbps(r.min_bytes, ms) / r.device.theoretical_gbps);
    if (r.flops > 0 && ms > 0 && r.compute == "fp32")
      j.field("pct_of_spec_fp32", 100.0 * r.flops / (ms * 1e6) / spec_fp32_gflops(r.device));
    if (r.flops > 0 && ms > 0 && r.compute == "tf32" && tf32 > 0)
      j.field("pct_of_spec_tf32", 100.0 * r.flops / (ms * 1e6) / tf32);
  } else {
    j.null_field("spec");
  }
  if (r.choice.empty()) j.null_field("choice");
  else j.field("choice", r.choice);
  j.begin_object("extra");
  for (const Extra& e : r.extras) j.field(e.key, e.value);
  j.end_object();
  j.end_object();
  return j.str();
}

void print_human(std::FILE* to, const Result& r) {
  std::fprintf(to, "== %s ==\n", r.step.id.c_str());
  if (r.device.present)
    std::fprintf(to, "device   %s (sm_%d%d, %d SMs, %.1f GB, L2 %.0f MB, %.0f GB/s theoretical; CUDA %s)\n",
                 r.device.name.c_str(), r.device.cc_major, r.device.cc_minor, r.device.sm_count,
                 r.device.global_mem / 1e9, r.device.l2_bytes / 1e6, r.device.theoretical_gbps,
                 cuda_version_string(r.device.runtime_version).c_str());
  else
    std::fprintf(to, "device   none (CPU step)\n");
  if (!r.choice.empty()) std::fprintf(to, "choice   %s\n", r.choice.c_str());
  std::fprintf(to, "problem ");
  for (const auto& [k, v] : r.size) std::fprintf(to, " %s=%lld", k.c_str(), static_cast<long long>(v));
  std::fprintf(to, "\n");
  if (r.verify_skipped)
    std::fprintf(to, "check    skipped (--no-verify)\n");
  else
    std::fprintf(to, "check    %s (%lld elements, max error %.3g)\n", r.check.ok ? "PASS" : "FAIL",
                 static_cast<long long>(r.check.checked), r.check.max_err);
  const char* clock = r.kernel.source == "cupti"    ? "the GPU's own records"
                      : r.kernel.source == "events" ? "CUDA events: CUPTI unavailable"
                                                    : "host clock";
  std::fprintf(to, "kernel   %.4f ms median (min %.4f, max %.4f, %d reps; %s)\n", r.kernel.median,
               r.kernel.min, r.kernel.max, r.kernel.reps, clock);
  if (r.kernel.call_reps > 0)
    std::fprintf(to, "call     %.4f ms median (CUDA events around the launch: what a caller waits)\n",
                 r.kernel.call_median);
  if (r.total)
    std::fprintf(to, "total    %.4f ms median %s (min %.4f, %d reps)\n", r.total->median, r.total_what.c_str(),
                 r.total->min, r.total->reps);
  std::fprintf(to, "metric   %.1f %s (from %s)\n", r.metric_value, r.metric_unit.c_str(),
               r.metric_from == "kernel_ms" ? "the kernel time" : "the total time");
  if (r.ceiling)
    std::fprintf(to, "ceiling  %.1f %s, %s [%s] -> %.1f%% of ceiling\n", r.ceiling->value,
                 r.ceiling->unit.c_str(), r.ceiling->name.c_str(), r.ceiling->detail.c_str(),
                 r.pct_of_ceiling());
  for (const Extra& e : r.extras)
    std::fprintf(to, "         %s = %.4g %s\n", e.key.c_str(), e.value, e.unit.c_str());
  for (const std::string& n : r.notes) std::fprintf(to, "note     %s\n", n.c_str());
}

int finish(const Result& result, const CommonOptions& opts) {
  Result r = result;
  if (r.kernel.source == "events")
    r.notes.push_back("kernel_ms from CUDA events (CUPTI: " + GpuActivity::get().why_unavailable() + ")");
  // The most shared memory one block of this run asked for (common/device.h), for the tables of
  // which GPU runs what.
  if (const size_t smem = largest_shared_memory_per_block(); smem > 0)
    r.extras.push_back({"smem_per_block_bytes", static_cast<double>(smem), "bytes"});
  r.check.print(stderr, r.step.id + " verification failed");
  print_human(stdout, r);
  if (!opts.trace_path.empty()) {
    GpuActivity::get().write_trace(opts.trace_path);
    std::printf("trace    %s (chrome://tracing or ui.perfetto.dev)\n", opts.trace_path.c_str());
  }
  if (opts.json) std::printf("%s\n", to_json(r).c_str());
  std::fflush(stdout);
  return (r.verify_skipped || r.check.ok) ? kExitOk : kExitVerifyFailed;
}

}  // namespace ladder
