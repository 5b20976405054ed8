// Every registered vector_add step at n = 1, 7, 33, 1000, 1000003 and the default, fresh random
// inputs each time (a new seed per case): the step must verify itself, and for the sizes small
// enough to dump, the test checks r == x + y from the .npy files independently of the step.
#include "tests/step_runner.h"
#include "vector_add/vector_add.cuh"

#include <gtest/gtest.h>

#include <tuple>

namespace {

constexpr int64_t kDumpLimit = 1000003;

class VectorAddGpu : public testing::TestWithParam<std::tuple<std::string, int64_t>> {};

TEST_P(VectorAddGpu, MatchesReference) {
  REQUIRE_GPU();
  const auto& [id, n] = GetParam();
  auto c = ladder_test::run_case(id, {"--n", std::to_string(n)}, n <= kDumpLimit);
  ASSERT_VERIFIED(id, c.run);
  EXPECT_EQ(ladder_test::json_number(c.run.json, "n"), static_cast<double>(n));
  if (c.dump_dir.empty()) return;
  const std::string& dir = c.dump_dir;

  auto x = ladder_test::read_npy(dir + "/x.npy");
  auto y = ladder_test::read_npy(dir + "/y.npy");
  auto out = ladder_test::read_npy(dir + "/r.npy");
  for (const ladder_test::NpyArray* a : {&x, &y, &out}) {
    ASSERT_EQ(a->descr, "<f4");
    ASSERT_EQ(a->shape, std::vector<int64_t>{n});
  }
  int64_t nonzero = 0;
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(out.as<float>()[i], x.as<float>()[i] + y.as<float>()[i]) << id << " element " << i;
    nonzero += x.as<float>()[i] != 0.0f;
  }
  EXPECT_GE(nonzero, n / 2) << "inputs must not be zeros";
}

std::vector<int64_t> sizes() { return {1, 7, 33, 1000, 1000003, vector_add::kDefaultN}; }

INSTANTIATE_TEST_SUITE_P(
    AllSteps, VectorAddGpu,
    testing::Combine(testing::ValuesIn(ladder_test::steps_of("vector_add")), testing::ValuesIn(sizes())),
    [](const testing::TestParamInfo<VectorAddGpu::ParamType>& p) {
      return ladder_test::param_name(std::get<0>(p.param), "n" + std::to_string(std::get<1>(p.param)));
    });

}  // namespace
