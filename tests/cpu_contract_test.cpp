// The step executable's contract (DESIGN.md), checked on every registered step of every folder by
// running it: bad usage -> one line and exit 2, --help -> 0, no device -> 77 (on machines without
// one). New steps are covered by being registered.
#include "tests/step_runner.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

namespace {

using ladder_test::run_step;

// The flag that sets each folder's main size; folders not listed get the generic checks only.
std::string size_flag(const std::string& id) {
  static const std::map<std::string, std::string> flags = {
      {"vector_add", "--n"}, {"reduction", "--n"}, {"transpose", "--rows"},
      {"sgemm", "--m"},      {"avg_matvec", "--l"}, {"separable_conv", "--width"}};
  auto it = flags.find(id.substr(0, id.find('/')));
  return it == flags.end() ? "" : it->second;
}

bool is_cpu_step(const std::string& id) { return id.size() > 4 && id.substr(id.size() - 4) == "_cpu"; }

class StepContract : public testing::TestWithParam<std::string> {};

TEST_P(StepContract, BadUsageExitsTwoWithOneLine) {
  const std::string& id = GetParam();
  std::vector<std::vector<std::string>> bad = {{"--bogus"}, {"--reps", "0"}, {"--seed", "abc"},
                                               {"extra"}, {"--json=yes"}};
  if (!size_flag(id).empty())
    for (const char* v : {"0", "-5", "abc", "1.5", "99999999999999999999"})
      bad.push_back({size_flag(id), v});
  for (const auto& args : bad) {
    auto r = run_step(id, args);
    EXPECT_EQ(r.exit_code, 2) << id << " " << args[0] << "\n" << r.output;
    EXPECT_EQ(r.output.rfind("error: ", 0), 0u) << r.output;
    EXPECT_NE(r.output.find("usage:"), std::string::npos) << r.output;
  }
}

TEST_P(StepContract, HelpExitsZero) {
  auto r = run_step(GetParam(), {"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--no-ceiling"), std::string::npos) << r.output;
}

// With every GPU hidden (CUDA_VISIBLE_DEVICES empty, so cudaGetDeviceCount reports no device) a GPU
// step exits 77 and says why, and a CPU step still runs. On a machine without a driver this is the
// same path; on a GPU machine it is the only way to reach it, so the test runs everywhere.
TEST_P(StepContract, NoDeviceExits77) {
  const std::string& id = GetParam();
  std::vector<std::string> args = {"--no-ceiling", "--reps", "1"};
  if (!size_flag(id).empty()) args.insert(args.end(), {size_flag(id), "100"});
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  auto r = run_step(id, args);
  args.insert(args.end(), {"--device", "7"});  // cannot be judged without devices: 77 as well
  auto r7 = run_step(id, args);
  unsetenv("CUDA_VISIBLE_DEVICES");
  if (is_cpu_step(id)) {
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r7.exit_code, 0) << r7.output;
  } else {
    EXPECT_EQ(r.exit_code, 77) << r.output;
    EXPECT_NE(r.output.find("no CUDA"), std::string::npos) << r.output;
    EXPECT_EQ(r7.exit_code, 77) << r7.output;
  }
}

INSTANTIATE_TEST_SUITE_P(AllSteps, StepContract, testing::ValuesIn(ladder_test::all_steps()),
                         [](const testing::TestParamInfo<std::string>& p) {
                           return ladder_test::param_name(p.param, p.param.substr(0, p.param.find('/')));
                         });

}  // namespace
