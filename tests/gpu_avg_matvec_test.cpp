// Every registered avg_matvec step at (L, M, N) = (32, 1, 1), (64, 33, 7), (512, 512, 16),
// (96, 1000, 5), (1000, 64, 3) and the default (512, 512, 1024), with a fresh seed each time.
// A step that takes the size must verify itself; for the sizes small enough to dump, the test also
// recomputes out from the dumped input and W in long double, independently of the step's reference,
// and holds the step to the folder's bound. A step that does not take the size (01-04, whose one
// block of L threads limits L) must exit 2 with one line naming --L, device or not.
// Also: --init posts (the post's 1-or-2 data, M a power of two) must match exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "avg_matvec/avg_matvec.cuh"
#include "tests/step_runner.h"

namespace {

using avg_matvec::BlockOfL;

struct Shape {
  int64_t L, M, N;
};

constexpr int64_t kDumpLimit = 1'000'000;  // input elements; the dump is 8 bytes each

std::vector<std::string> size_args(const Shape& s) {
  return {"--L", std::to_string(s.L), "--M", std::to_string(s.M), "--N", std::to_string(s.N)};
}

// The limit each step declares in its file (Step::limit), by name: steps 01-04 run one block of L
// threads. The rest take every size.
BlockOfL limit_of(const std::string& id) {
  const std::string name = id.substr(id.find('/') + 1);
  if (name == "01_one_block" || name == "02_block_per_batch") return BlockOfL::power_of_two;
  if (name == "03_warp_average" || name == "04_warp_matvec") return BlockOfL::whole_warps;
  return BlockOfL::any;
}

// out[i][k] = sum_j W[i][j] * (1/M) sum_t input[k][j][t], in long double, with the magnitudes.
void long_double_out(const ladder_test::NpyArray& input, const ladder_test::NpyArray& w,
                     const Shape& s, std::vector<long double>* out, std::vector<long double>* mag) {
  const double* x = input.as<double>();
  const double* W = w.as<double>();
  std::vector<long double> v(s.N * s.L), a(s.N * s.L);
  for (int64_t r = 0; r < s.N * s.L; ++r) {
    long double sum = 0, sum_abs = 0;
    for (int64_t t = 0; t < s.M; ++t) {
      sum += x[r * s.M + t];
      sum_abs += std::fabs(x[r * s.M + t]);
    }
    v[r] = sum / s.M;
    a[r] = sum_abs / s.M;
  }
  out->assign(s.L * s.N, 0);
  mag->assign(s.L * s.N, 0);
  for (int64_t i = 0; i < s.L; ++i)
    for (int64_t k = 0; k < s.N; ++k)
      for (int64_t j = 0; j < s.L; ++j) {
        (*out)[i * s.N + k] += static_cast<long double>(W[i * s.L + j]) * v[k * s.L + j];
        (*mag)[i * s.N + k] += std::fabs(static_cast<long double>(W[i * s.L + j])) * a[k * s.L + j];
      }
}

// The three dumped arrays are doubles of the problem's shapes.
void check_dump_shapes(const ladder_test::NpyArray& input, const ladder_test::NpyArray& w,
                       const ladder_test::NpyArray& out, const Shape& s) {
  for (const ladder_test::NpyArray* a : {&input, &w, &out}) ASSERT_EQ(a->descr, "<f8");
  ASSERT_EQ(input.shape, (std::vector<int64_t>{s.N, s.L, s.M}));
  ASSERT_EQ(w.shape, (std::vector<int64_t>{s.L, s.L}));
  ASSERT_EQ(out.shape, (std::vector<int64_t>{s.L, s.N}));
}

// Recomputes out from the dumped input and W in long double, independently of the step's
// reference, and holds the step to the folder's bound; checks the inputs are the folder's.
void check_from_dump(const std::string& id, const std::string& dir, const Shape& s) {
  const int64_t n_in = s.N * s.L * s.M;
  auto input = ladder_test::read_npy(dir + "/input.npy");
  auto w = ladder_test::read_npy(dir + "/W.npy");
  auto out = ladder_test::read_npy(dir + "/out.npy");
  check_dump_shapes(input, w, out, s);
  if (testing::Test::HasFatalFailure()) return;
  int64_t nonzero = 0;
  for (int64_t t = 0; t < n_in; ++t) {
    const double x = input.as<double>()[t];
    ASSERT_TRUE(x >= -1.0 && x < 1.0) << t << ": " << x;
    nonzero += x != 0.0;
  }
  EXPECT_GE(nonzero, n_in / 2) << "inputs must not be zeros";

  // One computation in double is within gamma_{L+M+1} * magnitude of the exact value (the bound's
  // derivation in avg_matvec.cu); long double's own error, 2^11 times smaller, gets 2^-10 of slack.
  std::vector<long double> want, mag;
  long_double_out(input, w, s, &want, &mag);
  const long double per_mag = (s.L + s.M + 2) * ladder::kDoubleEps * (1.0L + 1.0L / 1024);
  for (int64_t e = 0; e < s.L * s.N; ++e) {
    const double got = out.as<double>()[e];
    ASSERT_TRUE(std::isfinite(got)) << id << " out[" << e / s.N << "][" << e % s.N << "]";
    ASSERT_LE(std::fabs(got - want[e]), per_mag * mag[e])
        << id << " out[" << e / s.N << "][" << e % s.N << "] = " << got << ", long double "
        << static_cast<double>(want[e]);
  }
}

class AvgMatvecGpu : public testing::TestWithParam<std::tuple<std::string, Shape>> {};

TEST_P(AvgMatvecGpu, MatchesReference) {
  const auto& [id, s] = GetParam();
  if (!avg_matvec::accepts(limit_of(id), s.L)) {
    // Checked right after the flags, before the device: runs on every machine.
    auto r = ladder_test::run_step(id, size_args(s));
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_EQ(r.output.rfind("error: ", 0), 0u) << r.output;
    const std::string first_line = r.output.substr(0, r.output.find('\n'));
    EXPECT_NE(first_line.find("--L " + std::to_string(s.L)), std::string::npos) << r.output;
    return;
  }
  REQUIRE_GPU();
  const int64_t n_in = s.N * s.L * s.M;
  auto c = ladder_test::run_case(id, size_args(s), n_in <= kDumpLimit);
  ASSERT_VERIFIED(id, c.run);
  EXPECT_EQ(ladder_test::json_number(c.run.json, "L"), static_cast<double>(s.L));
  EXPECT_EQ(ladder_test::json_number(c.run.json, "M"), static_cast<double>(s.M));
  EXPECT_EQ(ladder_test::json_number(c.run.json, "N"), static_cast<double>(s.N));
  if (!c.dump_dir.empty()) check_from_dump(id, c.dump_dir, s);
}

std::vector<Shape> shapes() {
  return {{32, 1, 1},     {64, 33, 7},
          {512, 512, 16}, {96, 1000, 5},
          {1000, 64, 3},  {avg_matvec::kDefaultL, avg_matvec::kDefaultM, avg_matvec::kDefaultN}};
}

std::string shape_name(const Shape& s) {
  return "L" + std::to_string(s.L) + "_M" + std::to_string(s.M) + "_N" + std::to_string(s.N);
}

INSTANTIATE_TEST_SUITE_P(AllSteps, AvgMatvecGpu,
                         testing::Combine(testing::ValuesIn(ladder_test::steps_of("avg_matvec")),
                                          testing::ValuesIn(shapes())),
                         [](const testing::TestParamInfo<AvgMatvecGpu::ParamType>& p) {
                           return ladder_test::param_name(std::get<0>(p.param),
                                                          shape_name(std::get<1>(p.param)));
                         });

// The post's data: every input 1 or 2. With M a power of two every intermediate is exact, so the
// step's own check is exact (bound 0) and out must equal sum_j W[i][j] * S[k][j] / M, S the integer
// row sums, computed here in int64.
class AvgMatvecPosts : public testing::TestWithParam<std::string> {};

TEST_P(AvgMatvecPosts, ExactOnThePostsData) {
  REQUIRE_GPU();
  const std::string& id = GetParam();
  const Shape s{64, 128, 5};  // every step takes L = 64
  auto args = size_args(s);
  args.insert(args.end(), {"--init", "posts"});
  auto c = ladder_test::run_case(id, args, true);
  ASSERT_VERIFIED(id, c.run);
  EXPECT_EQ(ladder_test::json_number(c.run.json, "max_err"), 0.0) << c.run.json;

  auto input = ladder_test::read_npy(c.dump_dir + "/input.npy");
  auto w = ladder_test::read_npy(c.dump_dir + "/W.npy");
  auto out = ladder_test::read_npy(c.dump_dir + "/out.npy");
  check_dump_shapes(input, w, out, s);
  if (HasFatalFailure()) return;
  const double* x = input.as<double>();
  const double* W = w.as<double>();
  std::vector<int64_t> S(s.N * s.L, 0);
  int64_t twos = 0;
  for (int64_t t = 0; t < s.N * s.L * s.M; ++t) {
    ASSERT_TRUE(x[t] == 1.0 || x[t] == 2.0) << t;
    S[t / s.M] += static_cast<int64_t>(x[t]);
    twos += x[t] == 2.0;
  }
  EXPECT_GT(twos, 0);
  EXPECT_LT(twos, s.N * s.L * s.M);
  for (int64_t i = 0; i < s.L; ++i)
    for (int64_t k = 0; k < s.N; ++k) {
      int64_t dot = 0;
      for (int64_t j = 0; j < s.L; ++j)
        dot += static_cast<int64_t>(W[i * s.L + j]) * S[k * s.L + j];
      ASSERT_EQ(out.as<double>()[i * s.N + k], static_cast<double>(dot) / s.M)
          << id << " out[" << i << "][" << k << "]";
    }
}

INSTANTIATE_TEST_SUITE_P(AllSteps, AvgMatvecPosts,
                         testing::ValuesIn(ladder_test::steps_of("avg_matvec")),
                         [](const testing::TestParamInfo<std::string>& p) {
                           return ladder_test::param_name(p.param, "posts");
                         });

// What step 08 should choose at this size on the GPU the test sees, worked out here from the
// device (or profile) and the kernel's design, not asked of the step: one block of 1024 threads and
// 131,584 bytes of shared memory an SM (08_one_kernel.cu's kSharedBytes; two never fit on one SM of
// any GPU the suite knows), 8 rows of W a block, N <= 8, L <= 1024. The step's refusals come in this
// order; the expected text is how the record's choice starts.
std::string expected_choice(const Shape& s, const ladder_test::SeenDevice& d) {
  constexpr size_t kSharedBytes = 131584;
  const std::string graph = "step 07's graph: ";
  if (d.smem_per_block_optin < kSharedBytes) return graph + "the kernel needs 131584 B";
  if (s.N > 8) return graph + "N = " + std::to_string(s.N) + " > 8";
  if (s.L > 1024) return graph + "L = " + std::to_string(s.L) + " > 1024";
  const int64_t blocks = (s.L + 7) / 8;
  if (blocks > d.sm_count)
    return graph + std::to_string(blocks) + " blocks of 8 rows, " + std::to_string(d.sm_count) + " fit at once";
  return "one kernel, replayed as a graph: ";
}

// Step 08 runs one cooperative kernel when N <= 8 and L <= 1024 and its blocks of 8 rows of W all
// fit on the GPU at once, and step 07's graph otherwise: one block of rows and several with a
// partial last one, an odd L (rows of W 8 bytes off a 16-byte boundary), N = 1, N = 8, L = 864 (108
// blocks: all of an A100's SMs) and L = 1024 (the most the kernel takes; more blocks than an A100
// holds); N = 9 and L = 1025 for the graph. Each run is checked from the dump as well, and the
// record must name the path expected for the GPU (or device profile) it ran on.
TEST(AvgMatvecOneKernel, SmallCallsRunOneKernelTheRestTheGraph) {
  REQUIRE_GPU();
  const std::string id = "avg_matvec/08_one_kernel";
  const auto ids = ladder_test::steps_of("avg_matvec");
  if (std::find(ids.begin(), ids.end(), id) == ids.end()) GTEST_SKIP() << id << " is not in this build";
  const ladder_test::SeenDevice device = ladder_test::seen_device();
  const std::vector<Shape> shapes = {{8, 33, 3},  {1000, 64, 8}, {301, 7, 8},  {257, 3, 1},
                                     {864, 16, 8}, {1024, 16, 8}, {64, 33, 9}, {1025, 2, 2}};
  std::vector<std::string> skipped;  // all of them where the GPU lacks the step's requirement
  for (const Shape& shape : shapes) {
    auto c = ladder_test::run_case(id, size_args(shape), shape.N * shape.L * shape.M <= kDumpLimit);
    const size_t before = skipped.size();
    EXPECT_TRUE(ladder_test::verified_or_justified(id, c.run, shape_name(shape), &skipped));
    if (skipped.size() > before) continue;
    EXPECT_NE(c.run.json.find("\"choice\":\"" + expected_choice(shape, device)), std::string::npos)
        << shape_name(shape) << " on " << (device.profile.empty() ? "this GPU" : device.profile) << ": "
        << c.run.json;
    if (!c.dump_dir.empty()) check_from_dump(id, c.dump_dir, shape);
  }
  SKIP_IF_ALL_SKIPPED(static_cast<int>(shapes.size()), skipped);
}

// The steps that record a CUDA Graph (07, 08) report what recording it cost, once, on the host
// clock: a positive time in the record's extra.graph_setup_ms. Step 06, which launches as it goes,
// reports none.
TEST(AvgMatvecGraph, StepsThatRecordAGraphReportItsSetupTime) {
  REQUIRE_GPU();
  const auto ids = ladder_test::steps_of("avg_matvec");
  const Shape shape{64, 33, 7};
  int ran = 0;
  std::vector<std::string> skipped;
  for (const std::string id : {"avg_matvec/06_vector_average", "avg_matvec/07_cuda_graph",
                               "avg_matvec/08_one_kernel"}) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) continue;
    ++ran;
    auto c = ladder_test::run_case(id, size_args(shape), false);
    const size_t before = skipped.size();
    EXPECT_TRUE(ladder_test::verified_or_justified(id, c.run, shape_name(shape), &skipped));
    if (skipped.size() > before) continue;
    const bool records_a_graph = id != "avg_matvec/06_vector_average";
    EXPECT_EQ(ladder_test::json_has(c.run.json, "graph_setup_ms"), records_a_graph)
        << id << ": " << c.run.json;
    if (records_a_graph) {
      EXPECT_GT(ladder_test::json_number(c.run.json, "graph_setup_ms"), 0.0) << c.run.json;
    }
  }
  if (ran == 0) GTEST_SKIP() << "steps 06-08 are not in this build";
  SKIP_IF_ALL_SKIPPED(ran, skipped);
}

}  // namespace
