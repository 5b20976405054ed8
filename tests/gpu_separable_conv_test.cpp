// Every registered separable_conv step at (width, height, taps) = (1, 1, 1), (1, 100, 3),
// (100, 1, 5), (33, 17, 7), (1021, 769, 31), (1000, 1000, 63) and (4096, 4096, 17), a fresh seed
// each time (random image and taps), outputs poisoned by the harness before every check: the step
// must verify itself. For the sizes small enough to dump, the test also recomputes the convolution
// from the .npy files in long double — two passes written here, independent of the harness — and
// checks every output pixel against the same rounding bound (2.001 K 2^-24 times the magnitude of
// its K x K terms). The tunable steps are also run with each --tile they list in --help; step 11
// at each K it compiles; every step under the T4, RTX 3060 and A100 device profiles up to K = 127.
#include "separable_conv/separable_conv.cuh"
#include "tests/step_runner.h"
#include "common/device.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <tuple>
#include <vector>

namespace {

struct Shape {
  int64_t width, height;
  int taps;
};

constexpr int64_t kDumpLimit = 1000000;  // pixels: the long double recomputation stays ~1 s

std::vector<std::string> size_args(const Shape& s) {
  return {"--width", std::to_string(s.width), "--height", std::to_string(s.height), "--taps", std::to_string(s.taps)};
}

// out from in and the taps, in long double, with the magnitudes; checks every pixel of `out`.
void check_from_dump(const std::string& id, const std::string& dir, const Shape& s) {
  auto in = ladder_test::read_npy(dir + "/in.npy");
  auto row = ladder_test::read_npy(dir + "/row_taps.npy");
  auto col = ladder_test::read_npy(dir + "/col_taps.npy");
  auto out = ladder_test::read_npy(dir + "/out.npy");
  const int64_t w = s.width, h = s.height, n = w * h;
  const int k = s.taps, r = k / 2;
  for (const ladder_test::NpyArray* a : {&in, &row, &col, &out}) ASSERT_EQ(a->descr, "<f4");
  ASSERT_EQ(in.shape, (std::vector<int64_t>{h, w}));
  ASSERT_EQ(out.shape, (std::vector<int64_t>{h, w}));
  ASSERT_EQ(row.shape, std::vector<int64_t>{k});
  ASSERT_EQ(col.shape, std::vector<int64_t>{k});
  const float* x = in.as<float>();
  const float* kr = row.as<float>();
  const float* kc = col.as<float>();
  const float* got = out.as<float>();
  int64_t nonzero = 0;
  for (int64_t i = 0; i < n; ++i) nonzero += x[i] != 0.0f;
  EXPECT_GE(nonzero, n / 2) << "inputs must not be zeros";
  for (int i = 0; i < k; ++i) ASSERT_TRUE(std::isfinite(kr[i]) && std::isfinite(kc[i]));

  std::vector<long double> t(n), t_abs(n);
  for (int64_t y = 0; y < h; ++y)
    for (int64_t xx = 0; xx < w; ++xx) {
      long double sum = 0, mag = 0;
      for (int i = 0; i < k; ++i) {
        const int64_t xi = xx + i - r;
        if (xi < 0 || xi >= w) continue;
        sum += static_cast<long double>(kr[i]) * x[y * w + xi];
        mag += std::fabs(static_cast<long double>(kr[i]) * x[y * w + xi]);
      }
      t[y * w + xx] = sum;
      t_abs[y * w + xx] = mag;
    }
  const double unit = 2.001 * k * ladder::kFloatEps;
  int64_t bad = 0;
  for (int64_t y = 0; y < h; ++y)
    for (int64_t xx = 0; xx < w; ++xx) {
      long double want = 0, mag = 0;
      for (int j = 0; j < k; ++j) {
        const int64_t yj = y + j - r;
        if (yj < 0 || yj >= h) continue;
        want += static_cast<long double>(kc[j]) * t[yj * w + xx];
        mag += std::fabs(static_cast<long double>(kc[j])) * t_abs[yj * w + xx];
      }
      const double g = got[y * w + xx];
      const double err = std::isfinite(g) ? std::fabs(g - static_cast<double>(want)) : INFINITY;
      if (!(err <= unit * static_cast<double>(mag))) {
        if (++bad <= 5)
          ADD_FAILURE() << id << " out[" << y << "][" << xx << "] = " << g << ", want " << static_cast<double>(want)
                        << " (allowed error " << unit * static_cast<double>(mag) << ")";
      }
    }
  EXPECT_EQ(bad, 0) << id << ": " << bad << " of " << n << " pixels outside the bound";
}

class SeparableConvGpu : public testing::TestWithParam<std::tuple<std::string, Shape>> {};

TEST_P(SeparableConvGpu, MatchesReference) {
  REQUIRE_GPU();
  const auto& [id, s] = GetParam();
  auto c = ladder_test::run_case(id, size_args(s), s.width * s.height <= kDumpLimit);
  ASSERT_VERIFIED(id, c.run);
  EXPECT_EQ(ladder_test::json_number(c.run.json, "width"), static_cast<double>(s.width));
  EXPECT_EQ(ladder_test::json_number(c.run.json, "height"), static_cast<double>(s.height));
  EXPECT_EQ(ladder_test::json_number(c.run.json, "taps"), static_cast<double>(s.taps));
  if (!c.dump_dir.empty()) check_from_dump(id, c.dump_dir, s);
}

std::vector<Shape> shapes() {
  return {{1, 1, 1}, {1, 100, 3}, {100, 1, 5}, {33, 17, 7}, {1021, 769, 31}, {1000, 1000, 63}, {4096, 4096, 17}};
}

std::string shape_name(const Shape& s) {
  return std::to_string(s.width) + "x" + std::to_string(s.height) + "_k" + std::to_string(s.taps);
}

INSTANTIATE_TEST_SUITE_P(
    AllSteps, SeparableConvGpu,
    testing::Combine(testing::ValuesIn(ladder_test::steps_of("separable_conv")), testing::ValuesIn(shapes())),
    [](const testing::TestParamInfo<SeparableConvGpu::ParamType>& p) {
      return ladder_test::param_name(std::get<0>(p.param), shape_name(std::get<1>(p.param)));
    });

class SeparableConvTiles : public testing::TestWithParam<std::string> {};

TEST_P(SeparableConvTiles, EveryTileVerifies) {
  REQUIRE_GPU();
  const std::string& id = GetParam();
  const std::vector<std::string> tiles = ladder_test::help_choices(id, "--tile");
  ASSERT_FALSE(tiles.empty()) << id << " is declared TUNABLE but lists no --tile candidates";
  // Both global-access paths (width % 4 == 0 or not), halos wider than a tile, K = 1 and the largest K;
  // K = 11 and 23 (2 and 5 whole chunks of 4 taps: the chunk counts that leave step 10's row filter
  // two chunks after its three-at-a-time loop) on odd widths, where rows start at every offset.
  const std::vector<Shape> sizes = {{1021, 769, 31}, {260, 70, 63}, {36, 9, 1}, {131, 5, separable_conv::kMaxTaps},
                                    {2048, 1000, 17}, {131, 45, 11}, {133, 40, 23}};
  std::vector<std::string> skipped;  // tiles this GPU cannot run (its requirement, its shared memory)
  int runs = 0;
  for (const std::string& tile : tiles)
    for (const Shape& s : sizes) {
      auto args = size_args(s);
      args.insert(args.end(), {"--tile", tile});
      auto c = ladder_test::run_case(id, args, s.width * s.height <= 300000);
      ++runs;
      const size_t before = skipped.size();
      EXPECT_TRUE(ladder_test::verified_or_justified(id, c.run, "--tile " + tile + " at " + shape_name(s), &skipped));
      if (skipped.size() == before && !c.dump_dir.empty()) check_from_dump(id + " --tile " + tile, c.dump_dir, s);
    }
  SKIP_IF_ALL_SKIPPED(runs, skipped);
}

// One run of a step with a kernel chosen by K (steps 11, 12 and 13): verified (or refused for a reason
// the GPU justifies, then recorded in `skipped`), the record's choice starting with `choice`, and,
// where the harness dumped the images, every pixel checked here too.
void expect_compiled_kernel(const std::string& id, const Shape& s, const std::string& choice,
                            std::vector<std::string>* skipped) {
  auto c = ladder_test::run_case(id, size_args(s), true);
  const size_t before = skipped->size();
  EXPECT_TRUE(ladder_test::verified_or_justified(id, c.run, shape_name(s), skipped));
  if (skipped->size() > before) return;
  EXPECT_NE(c.run.json.find("\"choice\":\"" + choice), std::string::npos) << c.run.json;
  if (!c.dump_dir.empty()) check_from_dump(id, c.dump_dir, s);
}

// Step 11 has a kernel for each odd K from 3 to 31: each of them, on an odd width (4-byte stores,
// rows at every offset, the swizzled row results) and a multiple of 4 (float4 stores), and on an
// image tall enough that a segment holds several tiles (the K - 1 rows a tile hands to the next are
// moved in shared memory), checked from the dump as well; and the record says which kernel ran.
TEST(SeparableConvCompiledTaps, EveryCompiledKVerifies) {
  REQUIRE_GPU();
  const std::string id = "separable_conv/11_compiled_taps";
  const auto ids = ladder_test::steps_of("separable_conv");
  if (std::find(ids.begin(), ids.end(), id) == ids.end()) GTEST_SKIP() << id << " is not in this build";
  std::vector<std::string> skipped;  // all of them where the GPU lacks the step's requirement
  int runs = 0;
  for (int k = 3; k <= 31; k += 2)
    for (const Shape& s : {Shape{131, 45, k}, Shape{256, 37, k}, Shape{3001, 2001, k}}) {
      expect_compiled_kernel(id, s, "K = " + std::to_string(k) + " compiled in", &skipped);
      ++runs;
    }
  SKIP_IF_ALL_SKIPPED(runs, skipped);
}

// Step 12 has a kernel for K = 63 and for K = 127, whose row results live in slots of 32 rows that
// shift down one slot per group: each kernel on an odd width (4-byte stores, rows at every offset,
// the swizzled row results) and a multiple of 4 (float4 stores), on an image shorter and narrower
// than its halo, and on images tall enough that a segment's slots shift many times, checked from
// the dump as well; the record says which kernel ran. K = 33 and 17 take the paths it hands on.
TEST(SeparableConvLongFilters, EveryLongKernelVerifies) {
  REQUIRE_GPU();
  const std::string id = "separable_conv/12_long_filters";
  const auto ids = ladder_test::steps_of("separable_conv");
  if (std::find(ids.begin(), ids.end(), id) == ids.end()) GTEST_SKIP() << id << " is not in this build";
  std::vector<std::string> skipped;
  int runs = 0;
  for (int k : {63, 127})
    for (const Shape& s : {Shape{131, 45, k}, Shape{256, 37, k}, Shape{100, 9, k}, Shape{3001, 2001, k},
                           Shape{1024, 1500, k}}) {
      expect_compiled_kernel(id, s, "K = " + std::to_string(k) + " compiled in, ", &skipped);
      ++runs;
    }
  expect_compiled_kernel(id, {131, 45, 33}, "K = 33 has no compiled kernel", &skipped);
  expect_compiled_kernel(id, {131, 45, 17}, "K = 17 compiled in: ", &skipped);
  runs += 2;
  SKIP_IF_ALL_SKIPPED(runs, skipped);
}

// Step 13 has a kernel for each odd K from 3 to 31 and for K = 63 on widths that are a multiple of
// 4: each of them on an image narrower than a tile, one a few tiles wide and tall, and one tall and
// wide enough that a segment holds several tiles (each group's row results move down a slot),
// checked from the dump as well; the record says which kernel ran. An odd width runs as in step 12
// (step 11's kernel at K = 31, step 12's at 63), and K = 127 step 12's kernel.
TEST(SeparableConvSlidingWindow, EveryCompiledKVerifies) {
  REQUIRE_GPU();
  const std::string id = "separable_conv/13_sliding_window";
  const auto ids = ladder_test::steps_of("separable_conv");
  if (std::find(ids.begin(), ids.end(), id) == ids.end()) GTEST_SKIP() << id << " is not in this build";
  std::vector<std::string> skipped;
  int runs = 0;
  for (int k = 3; k <= 31; k += 2)
    for (const Shape& s : {Shape{100, 9, k}, Shape{256, 37, k}, Shape{4096, 1000, k}}) {
      expect_compiled_kernel(id, s, "K = " + std::to_string(k) + " compiled in, runs of 16", &skipped);
      ++runs;
    }
  for (const Shape& s : {Shape{100, 9, 63}, Shape{256, 37, 63}, Shape{4096, 1000, 63}}) {
    expect_compiled_kernel(id, s, "K = 63 compiled in, runs of 16", &skipped);
    ++runs;
  }
  expect_compiled_kernel(id, {131, 45, 31}, "a width that is not a multiple of 4, as step 12: K = 31 compiled in: ",
                         &skipped);
  expect_compiled_kernel(id, {131, 45, 63}, "a width that is not a multiple of 4, as step 12: K = 63 compiled in, 3 slots",
                         &skipped);
  expect_compiled_kernel(id, {260, 70, 127}, "K = 127 compiled in, 5 slots", &skipped);
  runs += 3;
  SKIP_IF_ALL_SKIPPED(runs, skipped);
}

// Every GPU (device profiles, docs/contract.md): every step of the folder at the test size and at
// K = 63 and 127 (the shared-memory steps' largest tiles) under every shipped profile verifies, or
// refuses for a reason the test checks against the profile (the step's declared architecture, or
// more shared memory per block than the profile has: tests/step_runner.h, judge()); a tunable step
// that runs says what it chose.
class SeparableConvProfiles : public testing::TestWithParam<std::string> {};

TEST_P(SeparableConvProfiles, VerifyOrRefuseForAReasonAtLargeK) {
  SKIP_UNDER_AN_OUTER_PROFILE();  // first: a skip that needs no CUDA start
  REQUIRE_GPU();
  const std::string& id = GetParam();
  const auto tunable = ladder_test::tunable_steps("separable_conv");
  const bool is_tunable = std::find(tunable.begin(), tunable.end(), id) != tunable.end();
  std::vector<std::string> skipped;
  int runs = 0;
  for (const ladder::DeviceProfile* profile : ladder::known_device_profiles())
    for (const Shape& s : {Shape{133, 67, 17}, Shape{260, 70, 63}, Shape{131, 40, 127}}) {
      auto args = size_args(s);
      args.insert(args.end(), {"--json", "--no-ceiling", "--reps", "1", "--warmup", "0"});
      const std::vector<std::string> env = {std::string("LADDER_DEVICE_PROFILE=") + profile->key};
      const auto r = ladder_test::run_step(id, args, env);
      const std::string where = id + " under " + profile->key + " at " + shape_name(s);
      ++runs;
      const size_t before = skipped.size();
      EXPECT_TRUE(ladder_test::verified_or_justified(id, r, where, &skipped, env));
      if (is_tunable && skipped.size() == before) {
        EXPECT_EQ(r.json.find("\"choice\":null"), std::string::npos) << where << ": no choice\n" << r.json;
      }
    }
  SKIP_IF_ALL_SKIPPED(runs, skipped);
}

INSTANTIATE_TEST_SUITE_P(AllSteps, SeparableConvProfiles, testing::ValuesIn(ladder_test::steps_of("separable_conv")),
                         [](const testing::TestParamInfo<std::string>& p) {
                           return ladder_test::param_name(p.param, "profiles");
                         });

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SeparableConvTiles);  // the TUNABLE list, as cpu_contract_test checks it
INSTANTIATE_TEST_SUITE_P(AllSteps, SeparableConvTiles, testing::ValuesIn(ladder_test::tunable_steps("separable_conv")),
                         [](const testing::TestParamInfo<std::string>& p) {
                           return ladder_test::param_name(p.param, "tiles");
                         });

}  // namespace
