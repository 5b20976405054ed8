// Every registered reduction step at n = 1, 7, 33, 1000, 1000003, 2^24+5 and 2^28, fresh random
// inputs each time (a new seed per case): the step must verify itself (exact int64 equality with
// the CPU sum), and for the sizes small enough to dump the test adds up in.npy itself and compares
// with sum.npy. Also: sizes too large for the machine exit 3 naming the bytes.
#include "tests/step_runner.h"
#include "reduction/reduction.cuh"

#include <gtest/gtest.h>

#include <tuple>

namespace {

constexpr int64_t kDumpLimit = (int64_t(1) << 24) + 5;

class ReductionGpu : public testing::TestWithParam<std::tuple<std::string, int64_t>> {};

TEST_P(ReductionGpu, MatchesReference) {
  REQUIRE_GPU();
  const auto& [id, n] = GetParam();
  auto c = ladder_test::run_case(id, {"--n", std::to_string(n)}, n <= kDumpLimit);
  ASSERT_VERIFIED(id, c.run);
  EXPECT_EQ(ladder_test::json_number(c.run.json, "n"), static_cast<double>(n));
  if (c.dump_dir.empty()) return;
  const std::string& dir = c.dump_dir;

  auto in = ladder_test::read_npy(dir + "/in.npy");
  auto sum = ladder_test::read_npy(dir + "/sum.npy");
  ASSERT_EQ(in.descr, "<i4");
  ASSERT_EQ(sum.descr, "<i8");
  ASSERT_EQ(in.shape, std::vector<int64_t>{n});
  ASSERT_EQ(sum.shape, std::vector<int64_t>{1});
  int64_t want = 0, nonzero = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t v = in.as<int32_t>()[i];
    ASSERT_GE(v, 0) << i;
    ASSERT_LE(v, reduction::kMaxValue) << i;
    want += v;
    nonzero += v != 0;
  }
  EXPECT_EQ(sum.as<int64_t>()[0], want) << id << " at n=" << n;
  EXPECT_GE(nonzero, n / 2) << "inputs must not be zeros";
}

std::vector<int64_t> sizes() {
  return {1, 7, 33, 1000, 1000003, kDumpLimit, reduction::kDefaultN};
}

INSTANTIATE_TEST_SUITE_P(
    AllSteps, ReductionGpu,
    testing::Combine(testing::ValuesIn(ladder_test::steps_of("reduction")), testing::ValuesIn(sizes())),
    [](const testing::TestParamInfo<ReductionGpu::ParamType>& p) {
      return ladder_test::param_name(std::get<0>(p.param), "n" + std::to_string(std::get<1>(p.param)));
    });

}  // namespace
