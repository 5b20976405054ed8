// Command-line parsing for every step: the shared flags of docs/contract.md plus the folder's own
// size and choice flags. Sizes are 64-bit. Any error throws ladder::UsageError with a one-line message;
// main() prints it with the usage and exits 2.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ladder {

// The common flags (docs/contract.md). --reps (at least 1) and --warmup (at least 0) are upper
// bounds: time_loop (common/timing.h) ends the warm-up once it has used a quarter of budget_ms and
// the timed reps once they have used budget_ms, which no flag sets.
struct CommonOptions {
  int reps = 20;                 // timed repetitions at most (the time budget may stop earlier)
  int warmup = 2;                // untimed runs before timing
  double budget_ms = 1500.0;     // stop timing once the reps so far took this long
  uint64_t seed = 20261121;      // inputs are a pure function of the seed
  int device = 0;
  bool json = false;             // print one JSON object as the last line
  bool verify = true;            // --no-verify skips the check (exit 0 then means "ran")
  bool ceiling = true;           // --no-ceiling skips the in-process ceiling measurement
  std::string dump_dir;          // --dump DIR: write inputs and GPU output as .npy
  std::string trace_path;        // --trace FILE: the GPU's activity as a Chrome/Perfetto trace
};

// The usage of the Cli that parsed last; printed after a usage error's one-line message.
const std::string& current_usage_text();
// The size flags of that Cli ("--rows --cols"): what the memory guard tells the user to lower.
const std::string& current_size_flags();

// Parses "123", "1e8", "2^28" and "2^28+5" exactly; returns false for anything else (signs,
// fractions, junk) and for values past 2^63 - 1.
bool parse_int64(const std::string& text, int64_t* out);

class Cli {
 public:
  Cli(std::string program, std::string summary);

  // A positive 64-bit size (--n, --rows): zero, negative or non-integer values are usage errors.
  void add_size(const std::string& name, int64_t* target, const std::string& help);
  // A value from a fixed list (--init random|analytic).
  void add_choice(const std::string& name, std::string* target, std::vector<std::string> choices,
                  const std::string& help);

  // A free-form word (--tile 128x128x8): empty values are usage errors; the caller validates it.
  void add_text(const std::string& name, std::string* target, const std::string& help);

  // Returns false when --help was given (usage already printed to stdout). --reps and --warmup above
  // 1,000,000 are taken as 1,000,000; --device above 2^20 is a usage error.
  bool parse(int argc, const char* const* argv);
  std::string usage() const;

  CommonOptions common;

 private:
  struct Flag {
    std::string name, help;
    int64_t* size = nullptr;
    std::string* choice = nullptr;  // add_choice (with choices) and add_text (without)
    std::vector<std::string> choices;
  };
  const Flag* find(const std::string& name) const;
  std::string program_, summary_;
  std::vector<Flag> flags_;
};

}  // namespace ladder
