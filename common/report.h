// What a step prints: one human-readable block, and with --json one JSON object as the last line
// (fields in docs/contract.md). Every folder fills a Result and calls finish().
#pragma once

#include "common/device.h"
#include "common/timing.h"
#include "common/verify.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ladder {

// Parsed from the step id "folder/NN_name" (or "folder/aat_NN_name" for a side ladder).
struct StepInfo {
  std::string id;       // "sgemm/05_2d_blocktiling"
  std::string folder;   // "sgemm"
  std::string name;     // "05_2d_blocktiling"
  std::string series;   // "main", or the side ladder's prefix ("aat")
  int index = 0;        // 5
  static StepInfo from_id(const std::string& id);  // throws std::invalid_argument on a bad id
};

struct Extra {
  std::string key;    // JSON key, snake_case
  double value = 0;
  std::string unit;   // shown in the human block
};

struct Result {
  StepInfo step;
  DeviceInfo device;
  std::vector<std::pair<std::string, int64_t>> size;  // {"n", 100000000}
  bool verify_skipped = false;
  VerifyReport check;
  Stats kernel;                 // the kernel (or CPU loop) time
  // total_ms: end to end with transfers, or (reduction 01-07 and smem_01-03) until a host-side finish has the answer;
  // total_what says which, on the human block's "total" line.
  std::optional<Stats> total;
  std::string total_what = "end-to-end, transfers included";
  double metric_value = 0;
  std::string metric_unit;      // "GB/s", "GFLOP/s", "GPix/s"
  // Which time the metric (and so pct_of_ceiling) is computed from: "kernel_ms", or "total_ms"
  // where the ceiling's own time also runs until the answer exists (reduction's host finish).
  std::string metric_from = "kernel_ms";
  std::optional<Ceiling> ceiling;
  // What a tunable step chose for this device and problem ("128x256x16_8x16_w64x64_s2: the
  // default for 132 SMs, 1 block per SM"), or what --tile / --variant named; "" for other steps.
  std::string choice;
  // The work the problem must do: the fewest bytes it must move (each input read once, each output
  // written once) and its floating-point operations (0 for pure data movement). The record's
  // "work", its roofline point, and its percentages of the spec peaks come from these.
  double min_bytes = 0, flops = 0;
  // The arithmetic a compute-bound step is compared with: "fp32", "tf32", or "" (bandwidth only).
  std::string compute = "";
  std::vector<Extra> extras;    // other measured numbers (transfer floors, faulting times)
  std::vector<std::string> notes;  // human-only lines

  double pct_of_ceiling() const;   // NaN when there is no ceiling
  bool verified() const { return !verify_skipped && check.ok; }
};

// Minimal JSON emitter: objects, strings with escapes, finite numbers (NaN/Inf become null). A double
// that is a whole number below 2^53 is written exactly, any other to 6 significant digits.
class JsonWriter {
 public:
  JsonWriter& begin_object(const std::string& key = "");
  JsonWriter& end_object();
  JsonWriter& field(const std::string& key, const std::string& value);
  JsonWriter& field(const std::string& key, const char* value);
  JsonWriter& field(const std::string& key, double value);
  JsonWriter& field(const std::string& key, int64_t value);
  JsonWriter& field(const std::string& key, int value) { return field(key, int64_t(value)); }
  JsonWriter& field(const std::string& key, bool value);
  JsonWriter& null_field(const std::string& key);
  const std::string& str() const { return out_; }
  static std::string escape(const std::string& s);

 private:
  void key(const std::string& k);
  std::string out_;
  std::vector<bool> first_;
};

std::string to_json(const Result& r);
void print_human(std::FILE* to, const Result& r);

// Prints the human block, writes the --trace file (a CudaError if it cannot), prints the JSON line
// with --json, and returns the exit code: 0 if verified or verification was skipped, 1 otherwise
// (mismatches are printed to stderr). Adds extra.smem_per_block_bytes where a kernel's shared memory
// was checked (common/device.h), and a note when kernel_ms came from events.
int finish(const Result& r, const CommonOptions& opts);

}  // namespace ladder
