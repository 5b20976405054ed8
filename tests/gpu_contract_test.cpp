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

// kernel_ms (the GPU's own records, CUPTI) against an independent measure: CUDA events around one
// long kernel (step 05 at 4096^3, ~5 ms), where launch overhead is a few microseconds. The two must
// agree within 3%, and the GPU's time can only be the shorter.
TEST(KernelTime, AgreesWithEventsAroundALongKernel) {
  REQUIRE_GPU();
  const std::string id = "sgemm/05_2d_blocktiling";
  if (ladder_test::step_path(id).empty()) GTEST_SKIP() << id << " is not in this build";
  const auto r = ladder_test::run_step(id, {"--json", "--no-ceiling", "--no-verify", "--reps", "5", "--warmup", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_NE(r.json.find("\"kernel_ms_source\":\"cupti\""), std::string::npos)
      << "CUPTI did not time this run (a profiler or sanitizer holding it?): " << r.json;
  const size_t call = r.json.find("\"call_ms\":");
  ASSERT_NE(call, std::string::npos) << r.json;
  const double kernel = ladder_test::json_number(r.json, "median");  // the first median: kernel_ms
  const double events = ladder_test::json_number(r.json.substr(call), "median");
  EXPECT_GT(kernel, 0.0) << r.json;
  EXPECT_LE(kernel, events * 1.001) << r.json;
  EXPECT_NEAR(kernel, events, 0.03 * events) << r.json;
}

INSTANTIATE_TEST_SUITE_P(AllSteps, GpuContract, testing::ValuesIn(ladder_test::all_steps()),
                         [](const testing::TestParamInfo<std::string>& p) {
                           return ladder_test::param_name(p.param, folder_of(p.param));
                         });

}  // namespace
