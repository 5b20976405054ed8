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

// Runs the registered entry under the exit-code contract: UsageError -> 2 (one line, then usage),
// CudaError -> 3, NoDeviceError -> 77, anything else -> 3.
int run_registered_step(const std::string& id, int argc, char** argv);

// The same mapping for any body; `usage` is printed after a usage error's one-line message.
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
