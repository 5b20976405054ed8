#include "common/cli.h"

#include "common/activity.h"
#include "common/check.h"
#include "common/npy.h"
#include "common/step.h"

#include <cctype>
#include <cstdio>
#include <limits>
#include <sstream>

namespace ladder {
namespace {

bool parse_digits(const std::string& s, size_t* pos, uint64_t* out) {
  size_t start = *pos;
  uint64_t v = 0;
  while (*pos < s.size() && std::isdigit(static_cast<unsigned char>(s[*pos]))) {
    uint64_t d = static_cast<uint64_t>(s[*pos] - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return false;
    v = v * 10 + d;
    ++*pos;
  }
  *out = v;
  return *pos > start;
}

bool checked_pow(uint64_t base, uint64_t exp, uint64_t* out) {
  uint64_t v = 1;
  for (uint64_t i = 0; i < exp; ++i) {
    if (base != 0 && v > std::numeric_limits<uint64_t>::max() / base) return false;
    v *= base;
  }
  *out = v;
  return true;
}

// term := digits [ ('e' | '^') digits ]   — "1e8" means 1*10^8, "2^28" means 2 to the 28th.
bool parse_term(const std::string& s, size_t* pos, uint64_t* out) {
  uint64_t a = 0;
  if (!parse_digits(s, pos, &a)) return false;
  if (*pos < s.size() && (s[*pos] == 'e' || s[*pos] == 'E' || s[*pos] == '^')) {
    bool is_pow = s[*pos] == '^';
    ++*pos;
    uint64_t b = 0, p = 0;
    if (!parse_digits(s, pos, &b) || b > 64) return false;
    if (is_pow) {
      if (!checked_pow(a, b, &p)) return false;
      a = p;
    } else {
      if (!checked_pow(10, b, &p) || (p != 0 && a > std::numeric_limits<uint64_t>::max() / p))
        return false;
      a *= p;
    }
  }
  *out = a;
  return true;
}

// --trace FILE must be writable before anything runs (the trace is written at the end).
void require_writable_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "ab");
  if (!f) throw UsageError("--trace: cannot write '" + path + "'");
  std::fclose(f);
}

std::string& usage_slot() {
  static std::string text;
  return text;
}

std::string& size_flags_slot() {
  static std::string text;
  return text;
}

}  // namespace

const std::string& current_usage_text() { return usage_slot(); }
const std::string& current_size_flags() { return size_flags_slot(); }

bool parse_int64(const std::string& text, int64_t* out) {
  size_t pos = 0;
  uint64_t total = 0;
  while (true) {
    uint64_t term = 0;
    if (!parse_term(text, &pos, &term)) return false;
    if (term > std::numeric_limits<uint64_t>::max() - total) return false;
    total += term;
    if (pos == text.size()) break;
    if (text[pos] != '+') return false;
    ++pos;
  }
  if (total > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
  *out = static_cast<int64_t>(total);
  return true;
}

Cli::Cli(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary)) {}

void Cli::add_size(const std::string& name, int64_t* target, const std::string& help) {
  Flag f;
  f.name = name;
  f.help = help;
  f.size = target;
  flags_.push_back(f);
}

void Cli::add_choice(const std::string& name, std::string* target, std::vector<std::string> choices,
                     const std::string& help) {
  Flag f;
  f.name = name;
  f.help = help;
  f.choice = target;
  f.choices = std::move(choices);
  flags_.push_back(f);
}

void Cli::add_text(const std::string& name, std::string* target, const std::string& help) {
  Flag f;
  f.name = name;
  f.help = help;
  f.choice = target;
  flags_.push_back(f);
}

const Cli::Flag* Cli::find(const std::string& name) const {
  for (const Flag& f : flags_)
    if (f.name == name) return &f;
  return nullptr;
}

std::string Cli::usage() const {
  std::ostringstream u;
  u << "usage: " << program_ << " [options]\n  " << summary_ << "\n";
  // The step's declared requirement (add_step NEEDS): what a GPU must be to run it.
  if (!declared_step().id.empty()) u << "  requires: " << declared_step().needs.text() << "\n";
  u << "\nproblem:\n";
  for (const Flag& f : flags_) {
    u << "  --" << f.name << (f.size ? " N" : " WORD") << "\t" << f.help;
    if (f.size) u << " (default " << *f.size << ")";
    if (f.choice && !f.choices.empty()) {
      u << " (one of:";
      for (const auto& c : f.choices) u << " " << c;
      u << "; default " << *f.choice << ")";
    } else if (f.choice) {
      u << " (default " << (f.choice->empty() ? "none" : *f.choice) << ")";
    }
    u << "\n";
  }
  u << "  sizes accept 123, 1e8, 2^28 and 2^24+5\n"
       "\ncommon:\n"
       "  --reps N        timed repetitions at most (default 20; a time budget may stop earlier)\n"
       "  --warmup N      untimed runs before timing (default 2)\n"
       "  --seed S        seed of the random inputs (default 20261121)\n"
       "  --device D      CUDA device index (default 0)\n"
       "  --json          print one JSON object as the last line\n"
       "  --no-verify     skip the check against the reference\n"
       "  --no-ceiling    skip measuring the ceiling in this process\n"
       "  --dump DIR      write inputs and GPU output as .npy files into DIR\n"
       "  --trace FILE    write the run's kernels, copies and phases as a Chrome/Perfetto trace\n"
       "  --help          this text\n"
       "\nexit codes: 0 verified, 1 verification failed, 2 bad usage, an unsupported size, or a GPU\n"
       "            that cannot run the step (\"unsupported: ...\"), 3 CUDA or library error (out of\n"
       "            memory included), 77 no usable CUDA device\n";
  return u.str();
}

bool Cli::parse(int argc, const char* const* argv) {
  usage_slot() = usage();
  size_flags_slot().clear();
  for (const Flag& f : flags_)
    if (f.size) size_flags_slot() += (size_flags_slot().empty() ? "--" : " --") + f.name;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) throw UsageError("unexpected argument '" + arg + "'");
    std::string name = arg.substr(2), value;
    bool has_inline_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_inline_value = true;
    }
    auto take_value = [&]() -> std::string {
      if (has_inline_value) return value;
      if (i + 1 >= argc) throw UsageError("--" + name + " needs a value");
      return argv[++i];
    };
    auto take_count = [&](int64_t lo) -> int64_t {
      std::string v = take_value();
      int64_t x = 0;
      if (!parse_int64(v, &x) || x < lo)
        throw UsageError("--" + name + " expects an integer >= " + std::to_string(lo) + ", got '" +
                         v + "'");
      return x;
    };
    auto no_value = [&]() {
      if (has_inline_value) throw UsageError("--" + name + " takes no value");
    };

    if (name == "help") {
      no_value();
      std::printf("%s", usage().c_str());
      return false;
    } else if (name == "json") {
      no_value();
      common.json = true;
    } else if (name == "no-verify") {
      no_value();
      common.verify = false;
    } else if (name == "no-ceiling") {
      no_value();
      common.ceiling = false;
    } else if (name == "reps") {
      common.reps = static_cast<int>(std::min<int64_t>(take_count(1), 1000000));
    } else if (name == "warmup") {
      common.warmup = static_cast<int>(std::min<int64_t>(take_count(0), 1000000));
    } else if (name == "seed") {
      common.seed = static_cast<uint64_t>(take_count(0));
    } else if (name == "device") {
      const int64_t index = take_count(0);
      if (index > (1 << 20))  // no machine has that many; an int keeps every real index
        throw UsageError("--device " + std::to_string(index) + " does not exist (no machine has 2^20 GPUs)");
      common.device = static_cast<int>(index);
    } else if (name == "dump") {
      common.dump_dir = take_value();
      if (common.dump_dir.empty()) throw UsageError("--dump needs a directory");
      require_writable_dir(common.dump_dir);
    } else if (name == "trace") {
      common.trace_path = take_value();
      if (common.trace_path.empty()) throw UsageError("--trace needs a file name");
      require_writable_file(common.trace_path);
      GpuActivity::request_trace();
    } else if (const Flag* f = find(name)) {
      if (f->size) {
        std::string v = take_value();
        int64_t x = 0;
        if (!parse_int64(v, &x) || x <= 0)
          throw UsageError("--" + name + " expects a positive integer, got '" + v + "'");
        *f->size = x;
      } else {
        std::string v = take_value();
        bool ok = f->choices.empty() && !v.empty();
        for (const auto& c : f->choices) ok = ok || c == v;
        if (!ok) throw UsageError("--" + name + " does not accept '" + v + "'");
        *f->choice = v;
      }
    } else {
      throw UsageError("unknown flag '" + arg + "'");
    }
  }
  return true;
}

}  // namespace ladder
