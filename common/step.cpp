#include "common/step.h"

#include "common/check.h"
#include "common/cli.h"

#include <cstdio>
#include <map>
#include <stdexcept>

namespace ladder {
namespace {

std::map<std::string, StepEntry>& registry() {
  static std::map<std::string, StepEntry> steps;
  return steps;
}

DeclaredStep& declared_slot() {
  static DeclaredStep step;
  return step;
}

}  // namespace

std::string Requirement::arch() const {
  if (!any()) return "";
  return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor) + (exact ? "a" : "");
}

std::string Requirement::text() const {
  if (!any()) return "any GPU from sm_70 on";
  if (exact)
    return arch() + ", an sm_" + std::to_string(cc_major) + std::to_string(cc_minor) + " GPU and no other (" +
           feature + ")";
  return arch() + " or newer (" + feature + ")";
}

bool Requirement::met_by(int major, int minor) const {
  if (!any()) return true;
  if (exact) return major == cc_major && minor == cc_minor;
  return major > cc_major || (major == cc_major && minor >= cc_minor);
}

Requirement parse_requirement(const std::string& arch, const std::string& feature) {
  Requirement r;
  if (arch.empty() && feature.empty()) return r;
  // sm_ then two or three digits (the last one the minor), then an optional "a".
  const bool exact = !arch.empty() && arch.back() == 'a';
  const std::string digits = arch.size() > 3 ? arch.substr(3, arch.size() - 3 - (exact ? 1 : 0)) : "";
  const bool ok = arch.rfind("sm_", 0) == 0 && (digits.size() == 2 || digits.size() == 3) &&
                  digits.find_first_not_of("0123456789") == std::string::npos && !feature.empty();
  if (!ok) throw std::invalid_argument("a step requirement is an architecture (sm_80, sm_90a) and a feature, not '" +
                                       arch + "' / '" + feature + "'");
  r.cc_major = std::stoi(digits.substr(0, digits.size() - 1));
  r.cc_minor = digits.back() - '0';
  r.exact = exact;
  r.feature = feature;
  return r;
}

const DeclaredStep& declared_step() { return declared_slot(); }

bool register_step(const std::string& id, StepEntry entry) {
  registry()[id] = std::move(entry);
  return true;
}

int guarded(const std::function<int()>& body, const std::function<std::string()>& usage) {
  try {
    return body();
  } catch (const UnsupportedError& e) {
    std::fprintf(stderr, "unsupported: %s\n", e.what());
    return kExitUsage;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    std::string text = usage ? usage() : current_usage_text();
    if (!text.empty()) std::fprintf(stderr, "%s", text.c_str());
    return kExitUsage;
  } catch (const NoDeviceError& e) {
    std::fprintf(stderr, "skipped: %s (exit 77)\n", e.what());
    return kExitNoDevice;
  } catch (const CudaError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitCudaError;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: host memory allocation failed\n");
    return kExitCudaError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitCudaError;
  }
}

int run_registered_step(const std::string& id, int argc, char** argv) {
  auto it = registry().find(id);
  if (it == registry().end()) {
    std::fprintf(stderr, "error: step %s is not registered in this executable\n", id.c_str());
    return kExitUsage;
  }
  return guarded([&] { return it->second(argc, argv); }, nullptr);
}

int run_declared_step(const std::string& id, const Requirement& needs, int argc, char** argv) {
  declared_slot() = DeclaredStep{id, needs};
  return run_registered_step(id, argc, argv);
}

}  // namespace ladder
