// The step contract on a GPU machine, for every registered step of every folder: each size the
// folder declares OVERSIZED exits 3 naming the bytes (checked before anything is allocated: never
// an OOM kill, a hang or a wrapped size, the CPU, managed and zero-copy steps included), and the
// first device index that does not exist on this machine exits 2.
#include "tests/step_runner.h"

#include <gtest/gtest.h>

namespace {

using ladder_test::folder_of;

class GpuContract : public testing::TestWithParam<std::string> {};

TEST_P(GpuContract, OversizedExitsThreeNamingTheBytes) {
  REQUIRE_GPU();
  const auto sizes = ladder_test::folder_values(folder_of(GetParam()), "oversized");
  ASSERT_FALSE(sizes.empty()) << folder_of(GetParam()) << " declares no OVERSIZED sizes";
  for (const std::string& size : sizes) {
    auto args = ladder_test::split_args(size);
    args.push_back("--no-ceiling");
    auto r = ladder_test::run_step(GetParam(), args);
    // The declared requirement is checked when the device is opened, before any size is: a GPU (or
    // profile) that lacks it refuses first, and that refusal is judged like any other.
    const ladder_test::Verdict v = ladder_test::judge(GetParam(), r);
    if (v.kind == ladder_test::Verdict::skipped) GTEST_SKIP() << v.reason;
    EXPECT_EQ(r.exit_code, 3) << size << "\n" << r.output;
    EXPECT_NE(r.output.find("bytes"), std::string::npos) << size << "\n" << r.output;
  }
}

TEST_P(GpuContract, MissingDeviceIndexExitsTwo) {
  REQUIRE_GPU();
  const std::string missing = std::to_string(ladder_test::device_count());
  auto r = ladder_test::run_step(GetParam(), {"--device", missing, "--no-ceiling"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--device " + missing), std::string::npos) << r.output;
}

INSTANTIATE_TEST_SUITE_P(AllSteps, GpuContract, testing::ValuesIn(ladder_test::all_steps()),
                         [](const testing::TestParamInfo<std::string>& p) {
                           return ladder_test::param_name(p.param, folder_of(p.param));
                         });

}  // namespace
