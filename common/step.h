// How a step file plugs into its executable. A step file never has a main(): it registers an entry
// under its id, and common/step_main.cpp — compiled into every step executable with
// LADDER_STEP_ID="<folder>/<NN_name>" by add_step() — runs the entry with that id. Because lookup is
// by id, a step may #include an earlier step's file to reuse its kernel unchanged (vector_add 05
// includes 04): both register, only the executable's own runs.
#pragma once

#include <functional>
#include <string>

namespace ladder {

using StepEntry = std::function<int(int argc, char** argv)>;

bool register_step(const std::string& id, StepEntry entry);

// What a step needs of the GPU beyond what every GPU of the suite has (sm_70 on): its add_step
// line's NEEDS (cmake/LadderStep.cmake), compiled into the step executable. Checked once, when the
// device is opened (common/device.h, init_device), against the device or its profile; printed by
// --help; read by the tests from build/ladder_folders.txt to tell a skip from a failure.
struct Requirement {
  int cc_major = 0, cc_minor = 0;  // the oldest architecture (0.0: no requirement)
  bool exact = false;              // sm_90a: that architecture and no other (wgmma, setmaxnreg)
  std::string feature;             // what needs it: "cp.async", "wgmma, TMA"

  bool any() const { return cc_major > 0; }
  std::string arch() const;        // "sm_80", "sm_90a" ("" for none)
  std::string text() const;        // "sm_80 or newer (cp.async)", "sm_90a, i.e. an sm_90 GPU and no other (wgmma)"
  bool met_by(int major, int minor) const;
};

// "sm_80" / "sm_90a" and the feature; "" and "" is no requirement. Anything else throws
// std::invalid_argument.
Requirement parse_requirement(const std::string& arch, const std::string& feature);

// The step this executable runs and its requirement: set once by main() (common/step_main.cpp)
// before anything else runs. Empty id and no requirement in programs that are not steps (tests).
struct DeclaredStep {
  std::string id;
  Requirement needs;
};
const DeclaredStep& declared_step();

// Runs the registered entry under the exit-code contract: UsageError -> 2 (one line, then usage),
// UnsupportedError -> 2 (one line), CudaError -> 3, NoDeviceError -> 77, anything else -> 3 (host
// allocation failures included). An id not registered in this executable -> 2.
int run_registered_step(const std::string& id, int argc, char** argv);
// The same after declaring the step's requirement (step_main.cpp's call).
int run_declared_step(const std::string& id, const Requirement& needs, int argc, char** argv);

// The same mapping for any body; `usage` is printed after a usage error's one-line message (null:
// current_usage_text(), the last parsed Cli's).
int guarded(const std::function<int()>& body, const std::function<std::string()>& usage);

}  // namespace ladder

#define LADDER_CONCAT_INNER(a, b) a##b
#define LADDER_CONCAT(a, b) LADDER_CONCAT_INNER(a, b)

// LADDER_REGISTER_STEP("vector_add/05_pinned", [](int argc, char** argv) { ... });
#define LADDER_REGISTER_STEP(id, ...) \
  static const bool LADDER_CONCAT(ladder_registered_step_, __COUNTER__) = \
      ::ladder::register_step(id, __VA_ARGS__)

// The last line of every step file: LADDER_STEP(kStep);
// kStep is the folder's Step aggregate (its `id` first); the folder's harness entry point
// run(const Step&, int, char**) is found by argument-dependent lookup in the folder's namespace.
#define LADDER_STEP(step) \
  LADDER_REGISTER_STEP((step).id, [](int argc, char** argv) { return run(step, argc, argv); })
