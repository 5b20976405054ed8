// Every registered transpose step at 1 x 1, 1 x 1000, 1000 x 1, 33 x 65, 200 x 1000 (multiples of
// 4 but not of the tile: the float4 path with edge tiles), 1000 x 1002 (multiples of 2 only: the
// float2 path), 1025 x 4097, 4096 x 4096 and the default 8192 x 8192, with a fresh seed each time.
// Rows that start off a 32-byte boundary (07's skewed segments and halo): 1023 x 1024 (out rows at
// all eight phases, in rows aligned), 1024 x 1023 (out rows aligned, no halo; every other in row
// starts on an odd float), 2052 x 1030 (out rows at two phases), and 1025 x 4097 (both at once, and
// a last pair that crosses the end of the matrix).
// A step with run-time variants (07's --variant, listed in its --help) also runs every variant at
// shapes that reach each of its paths: 67 x 131 (halo, all eight out-row phases, odd in rows, edge
// tiles only), 136 x 67 (no halo, odd in rows), 1023 x 1024, 2052 x 1030 and 1025 x 4097 (interior
// tiles, strips that end early, a last vector that crosses the end of the matrix).
// The step must verify itself; for sizes small enough to dump, the test also checks
// out[c][r] == in[r][c] bit for bit from the .npy files, independently of the step's reference.
// 00_copy is the ceiling step: its output is a copy (rows x cols), checked as out == in.
// Also: sizes too large for the machine exit 3 naming the bytes.
#include "tests/step_runner.h"
#include "transpose/transpose.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <tuple>
#include <utility>

namespace {

using Shape = std::pair<int64_t, int64_t>;  // rows, cols

constexpr int64_t kDumpLimit = int64_t(1025) * 4097;

bool is_copy_step(const std::string& id) { return id == "transpose/00_copy"; }

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Runs `id` at rows x cols (plus `extra` flags) and checks it: a verified run of that size, and for
// sizes small enough to dump, the output from the .npy files.
void check_case(const std::string& id, int64_t rows, int64_t cols,
                const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"--rows", std::to_string(rows), "--cols", std::to_string(cols)};
  args.insert(args.end(), extra.begin(), extra.end());
  auto c = ladder_test::run_case(id, args, rows * cols <= kDumpLimit);
  ASSERT_VERIFIED(id, c.run);
  EXPECT_EQ(ladder_test::json_number(c.run.json, "rows"), static_cast<double>(rows));
  EXPECT_EQ(ladder_test::json_number(c.run.json, "cols"), static_cast<double>(cols));
  if (c.dump_dir.empty()) return;
  const std::string& dir = c.dump_dir;

  auto in = ladder_test::read_npy(dir + "/in.npy");
  auto out = ladder_test::read_npy(dir + "/out.npy");
  ASSERT_EQ(in.descr, "<f4");
  ASSERT_EQ(out.descr, "<f4");
  ASSERT_EQ(in.shape, (std::vector<int64_t>{rows, cols}));
  const float* a = in.as<float>();
  const float* b = out.as<float>();
  int64_t nonzero = 0;
  for (int64_t i = 0; i < rows * cols; ++i) nonzero += a[i] != 0.0f;
  EXPECT_GE(nonzero, rows * cols / 2) << "inputs must not be zeros";

  if (is_copy_step(id)) {
    ASSERT_EQ(out.shape, (std::vector<int64_t>{rows, cols}));
    for (int64_t i = 0; i < rows * cols; ++i) ASSERT_TRUE(same_bits(b[i], a[i])) << id << " element " << i;
    return;
  }
  ASSERT_EQ(out.shape, (std::vector<int64_t>{cols, rows}));
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t col = 0; col < cols; ++col)
      ASSERT_TRUE(same_bits(b[col * rows + row], a[row * cols + col]))
          << id << " out[" << col << "][" << row << "] = " << b[col * rows + row] << ", in["
          << row << "][" << col << "] = " << a[row * cols + col];
}

class TransposeGpu : public testing::TestWithParam<std::tuple<std::string, Shape>> {};

TEST_P(TransposeGpu, MatchesReference) {
  REQUIRE_GPU();
  const auto& [id, shape] = GetParam();
  check_case(id, shape.first, shape.second);
}

std::vector<Shape> shapes() {
  return {{1, 1},       {1, 1000},     {1000, 1},    {33, 65},
          {200, 1000},  {1000, 1002},  {1025, 4097}, {1023, 1024},
          {1024, 1023}, {2052, 1030},  {4096, 4096},
          {transpose::kDefaultRows, transpose::kDefaultCols}};
}

INSTANTIATE_TEST_SUITE_P(
    AllSteps, TransposeGpu,
    testing::Combine(testing::ValuesIn(ladder_test::steps_of("transpose")), testing::ValuesIn(shapes())),
    [](const testing::TestParamInfo<TransposeGpu::ParamType>& p) {
      const Shape& s = std::get<1>(p.param);
      return ladder_test::param_name(std::get<0>(p.param),
                                     std::to_string(s.first) + "x" + std::to_string(s.second));
    });

class TransposeVariants : public testing::TestWithParam<std::string> {};

TEST_P(TransposeVariants, EveryVariantVerifies) {
  REQUIRE_GPU();
  const std::string& id = GetParam();
  const std::vector<std::string> variants = ladder_test::help_choices(id, "--variant");
  ASSERT_FALSE(variants.empty()) << id << " is declared TUNABLE but lists no --variant names";
  const std::vector<Shape> sizes = {{67, 131},    {136, 67},    {96, 203},
                                    {1023, 1024}, {2052, 1030}, {1025, 4097}};
  for (const std::string& v : variants)
    for (const Shape& s : sizes) {
      SCOPED_TRACE("--variant " + v + " at " + std::to_string(s.first) + " x " + std::to_string(s.second));
      check_case(id, s.first, s.second, {"--variant", v});
    }
}

// Without --variant a tunable step picks its kernel from the device and says which and why in the
// record's "choice": 64x128_a16 where two of its 40.3 KiB, 512-thread blocks fit on an SM (an A100,
// an RTX 3060), 64x64_a16 on a T4 (64 KiB of shared memory per SM: one such block). Under each
// profile the pick must also verify.
TEST_P(TransposeVariants, DefaultFollowsTheDevice) {
  SKIP_UNDER_AN_OUTER_PROFILE();  // first: a skip that needs no CUDA start
  REQUIRE_GPU();
  const std::string& id = GetParam();
  const std::pair<const char*, const char*> expected[] = {
      {"t4", "64x64_a16"}, {"rtx3060", "64x128_a16"}, {"a100", "64x128_a16"}};
  std::vector<std::string> skipped;  // profiles whose GPU cannot run the step (its declared requirement)
  int runs = 0;
  for (const auto& [profile, name] : expected) {
    const std::vector<std::string> env = {std::string("LADDER_DEVICE_PROFILE=") + profile};
    const auto r = ladder_test::run_step(
        id, {"--rows", "1025", "--cols", "515", "--json", "--no-ceiling", "--reps", "1", "--warmup", "0",
             "--seed", std::to_string(ladder_test::fresh_seed())},
        env);
    ++runs;
    const size_t before = skipped.size();
    const testing::AssertionResult ran = ladder_test::verified_or_justified(id, r, env.front(), &skipped, env);
    EXPECT_TRUE(ran);
    if (!ran || skipped.size() > before) continue;
    EXPECT_EQ(ladder_test::choice_name(r.json), name) << env.front() << ": " << r.json;
  }
  SKIP_IF_ALL_SKIPPED(runs, skipped);
}

// Step 09's thin kernels, one per thin side R = 1 .. 16 in each orientation: a long side of two
// whole spans and part of a third (the span is about 8,192 / R elements), so that every kernel runs
// full blocks and a partial last one; then 17, which must take step 08's path.
TEST(TransposeThinGpu, EveryThinSideVerifies) {
  REQUIRE_GPU();
  const std::string id = "transpose/09_thin";
  const auto steps = ladder_test::steps_of("transpose");
  if (std::find(steps.begin(), steps.end(), id) == steps.end()) GTEST_SKIP() << id << " is not registered";
  for (int64_t r = 1; r <= 17; ++r) {
    const int64_t span = std::max<int64_t>(32, 8192 / r / 32 * 32);
    const int64_t long_side = 2 * span + 37;
    SCOPED_TRACE("thin side " + std::to_string(r));
    check_case(id, r, long_side);
    check_case(id, long_side, r);
  }
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TransposeVariants);  // the TUNABLE list, as cpu_contract_test checks it
INSTANTIATE_TEST_SUITE_P(AllSteps, TransposeVariants, testing::ValuesIn(ladder_test::tunable_steps("transpose")),
                         [](const testing::TestParamInfo<std::string>& p) {
                           return ladder_test::param_name(p.param, "variants");
                         });

}  // namespace
