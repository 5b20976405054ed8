#include "common/step.h"

#include "common/check.h"
#include "common/cli.h"

#include <cstdio>
#include <map>

namespace ladder {
namespace {

std::map<std::string, StepEntry>& registry() {
  static std::map<std::string, StepEntry> steps;
  return steps;
}

}  // namespace

bool register_step(const std::string& id, StepEntry entry) {
  registry()[id] = std::move(entry);
  return true;
}

int guarded(const std::function<int()>& body, const std::function<std::string()>& usage) {
  try {
    return body();
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

}  // namespace ladder
