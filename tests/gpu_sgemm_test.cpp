// Every registered sgemm step on the GPU, with fresh random inputs (a new seed per case) and C
// poisoned before each check (the harness): the step must verify itself against cuBLAS and the fp64
// CPU rows and columns. Where the problem is small enough to dump, the test also recomputes all of C
// in fp64 from A.npy and B.npy, independently of the step's harness, and checks C.npy with the same
// error bound (|got - exact| <= c K 2^-24 sum|terms|).
//   main steps   m x n x k in (1,1,1), (7,33,65), (128,128,128), (1000,777,333), (1024,1,1024),
//                (1,4096,512) and the default 4096^3 (also the bar's shape, 4096 x 4096 x 4096);
//                --init analytic at (7,33,65) and (1000,777,333), checked against the post's closed
//                form by integer sums;
//   07 onward    the paths the shapes above miss: (67,132,45) — 4-byte A copies with 16-byte B and C
//                rows and edge tiles in every dimension; (260,516,36) — 16-byte copies with edge
//                tiles in m, n and k; (100,132,3000) — step 10 splits k in many slices (16-byte B);
//                step 10 also splits at (1024,1,1024) and (1,4096,512), and its result is the same
//                bit for bit from one run to the next;
//   11 onward    the shape classes: m <= 16 (m = 1, 3, 5, 8, 16), n <= 16 (n = 1, 7, 16), long k
//                (up to 100,000), 64 x 64 x 65536 and (100,70,20000) — the split paths — and the
//                bars' (1,4096,4096), (4096,1,4096), (8,4096,4096); step 11 names its class in its
//                choice and its split paths give the same bits twice;
//   12           the dynamic tail: more tiles than block slots with a partial last wave — the cut
//                named in the choice (on the H100 without a profile at two shapes), the same bits
//                in two processes;
//   aat steps    all 16 pairs of m, k in {1, 33, 1000, 4096}; --init analytic at two sizes;
//   tunable      every --tile candidate (read from the step's own "known:" list) at three awkward
//                sizes: (67,45,33) — odd everything; (131,133,600) — scalar B rows, and k long enough
//                for step 10 to split; (260,516,600) — 16-byte copies, edge tiles in m, n and k, a
//                ring of stages that wraps, and a split; steps that are not tunable reject --tile
//                (cpu_sgemm_test);
//   tf32_04      its comparison variants where they apply (more tiles than SMs, not whole waves):
//                _sk splits tiles by k steps, _tail cuts the last wave's tiles in equal k ranges
//                (k long enough for pieces of 8 k steps), _c2 runs clusters of two, _tma stores C
//                by TMA (rows of C a multiple of 16 bytes; the awkward sizes above run its fallback
//                and its clipped edge tiles); exact with integer inputs;
//   ceilings     the aat ceiling path (copy ceiling, cuBLAS extras) and the main one (cuBLAS).
#include "sgemm/sgemm.cuh"
#include "common/verify.h"
#include "tests/step_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

namespace {

struct Shape {
  int64_t m, n, k;
};

std::vector<std::string> series_steps(bool aat) {
  std::vector<std::string> out;
  for (const auto& id : ladder_test::steps_of("sgemm"))
    if ((id.find("/aat_") != std::string::npos) == aat) out.push_back(id);
  return out;
}

std::vector<std::string> size_args(const Shape& s, bool aat) {
  if (aat) return {"--m", std::to_string(s.m), "--k", std::to_string(s.k)};
  return {"--m", std::to_string(s.m), "--n", std::to_string(s.n), "--k", std::to_string(s.k)};
}

// The series a step belongs to, from its id: "aat", "tf32" or "main". The tf32 steps run every main
// case (same flags) and are checked with the TF32 bound (sgemm.cuh).
std::string series_of(const std::string& id) {
  if (id.find("/aat_") != std::string::npos) return "aat";
  if (id.find("/tf32_") != std::string::npos) return "tf32";
  return "main";
}

// Small enough to dump and to recompute on the CPU inside the test.
bool dumpable(const Shape& s) {
  return double(s.m) * double(s.n) * double(s.k) <= double(1 << 28) && double(s.m) * double(s.n) <= double(1 << 22);
}

// Recomputes C = A·B (or A·Aᵀ) from the dumped inputs — in fp64, or by integer sums for the post's
// analytic inputs — and checks C.npy against it with the exact-reference bound.
void check_dump(const std::string& dir, const Shape& s, bool aat, bool analytic, bool tf32) {
  const int64_t m = s.m, n = aat ? s.m : s.n, k = s.k;
  auto A = ladder_test::read_npy(dir + "/A.npy");
  auto C = ladder_test::read_npy(dir + "/C.npy");
  ASSERT_EQ(A.descr, "<f4");
  ASSERT_EQ(C.descr, "<f4");
  ASSERT_EQ(A.shape, (std::vector<int64_t>{m, k}));
  ASSERT_EQ(C.shape, (std::vector<int64_t>{m, n}));
  ladder_test::NpyArray B;
  if (!aat) {
    B = ladder_test::read_npy(dir + "/B.npy");
    ASSERT_EQ(B.descr, "<f4");
    ASSERT_EQ(B.shape, (std::vector<int64_t>{k, n}));
  }
  const float* a = A.as<float>();
  const float* b = aat ? nullptr : B.as<float>();
  auto right = [&](int64_t p, int64_t j) { return aat ? a[j * k + p] : b[p * n + j]; };

  if (analytic) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) ASSERT_EQ(a[i * k + p], float(i + p));
  } else {
    int64_t nonzero = 0;
    for (int64_t i = 0; i < m * k; ++i) nonzero += a[i] != 0.0f;
    EXPECT_GE(nonzero, m * k / 2) << "inputs must not be zeros";
  }

  std::vector<double> ref(m * n, 0.0), mag(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    double* r = &ref[i * n];
    double* g = &mag[i * n];
    for (int64_t p = 0; p < k; ++p) {
      const double x = a[i * k + p];
      for (int64_t j = 0; j < n; ++j) {
        const double t = x * double(right(p, j));
        r[j] += t;
        g[j] += std::fabs(t);
      }
    }
  }
  if (analytic) {  // integer sums of (i + p)(p - j) or (i + p)(j + p): exact in int64 at these sizes
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t v = 0, g = 0;
        for (int64_t p = 0; p < k; ++p) {
          const int64_t t = (i + p) * (aat ? (j + p) : (p - j));
          v += t;
          g += std::llabs(t);
        }
        ASSERT_EQ(ref[i * n + j], double(v));  // the fp64 recomputation is exact here too
        ref[i * n + j] = double(v);
        mag[i * n + j] = double(g);
      }
  }
  const ladder::VerifyReport v =
      ladder::verify_bounded(C.as<float>(), ref.data(), mag.data(), m * n,
                             tf32 ? sgemm::bound_tf32_vs_exact(k) : sgemm::bound_vs_exact(k), {m, n});
  EXPECT_TRUE(v.ok) << v.mismatches << " of " << v.checked << " wrong; first: "
                    << (v.first_bad.empty() ? "" : v.first_bad.front());
}

std::string shape_name(const Shape& s, bool aat) {
  return aat ? "m" + std::to_string(s.m) + "_k" + std::to_string(s.k)
             : std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

// Runs `id` at `s` and checks its record and, where it dumps, C from the inputs. A refusal is judged
// (tests/step_runner.h): without `skipped` a justified one skips the test; with it (a loop over
// candidates), it is recorded there and the next run goes on.
void run_and_check(const std::string& id, const Shape& s, bool aat, std::vector<std::string> extra = {},
                   std::vector<std::string>* skipped = nullptr) {
  const bool analytic = std::find(extra.begin(), extra.end(), "analytic") != extra.end();
  std::vector<std::string> args = size_args(s, aat);
  args.insert(args.end(), extra.begin(), extra.end());
  auto c = ladder_test::run_case(id, args, dumpable(s));
  if (skipped) {
    const size_t before = skipped->size();
    ASSERT_TRUE(ladder_test::verified_or_justified(id, c.run, shape_name(s, aat), skipped));
    if (skipped->size() > before) return;
  } else {
    ASSERT_VERIFIED(id, c.run);
  }
  EXPECT_EQ(ladder_test::json_number(c.run.json, "m"), double(s.m));
  EXPECT_EQ(ladder_test::json_number(c.run.json, "k"), double(s.k));
  if (!aat) {
    EXPECT_EQ(ladder_test::json_number(c.run.json, "n"), double(s.n));
  }
  EXPECT_NE(c.run.json.find("\"series\":\"" + series_of(id) + "\""), std::string::npos);
  if (!c.dump_dir.empty()) check_dump(c.dump_dir, s, aat, analytic, series_of(id) == "tf32");
}

// ---- main ladder --------------------------------------------------------------------------------

class SgemmGpu : public testing::TestWithParam<std::tuple<std::string, Shape>> {};

TEST_P(SgemmGpu, MatchesReference) {
  REQUIRE_GPU();
  const auto& [id, s] = GetParam();
  run_and_check(id, s, false);
}

std::vector<Shape> main_shapes() {
  return {{1, 1, 1},       {7, 33, 65},    {128, 128, 128}, {1000, 777, 333}, {1024, 1, 1024},
          {1, 4096, 512},  {sgemm::kDefaultM, sgemm::kDefaultN, sgemm::kDefaultK}};
}

INSTANTIATE_TEST_SUITE_P(MainSteps, SgemmGpu,
                         testing::Combine(testing::ValuesIn(series_steps(false)), testing::ValuesIn(main_shapes())),
                         [](const testing::TestParamInfo<SgemmGpu::ParamType>& p) {
                           return ladder_test::param_name(std::get<0>(p.param), shape_name(std::get<1>(p.param), false));
                         });

// Steps 07 onward: the fast and edge paths of 16-byte copies, and split-K.
std::vector<std::string> steps_from_07() {
  std::vector<std::string> out;
  for (const auto& id : series_steps(false))
    if (id >= "sgemm/07") out.push_back(id);
  return out;
}

INSTANTIATE_TEST_SUITE_P(FastPaths, SgemmGpu,
                         testing::Combine(testing::ValuesIn(steps_from_07()),
                                          testing::Values(Shape{67, 132, 45}, Shape{260, 516, 36}, Shape{100, 132, 3000})),
                         [](const testing::TestParamInfo<SgemmGpu::ParamType>& p) {
                           return ladder_test::param_name(std::get<0>(p.param), shape_name(std::get<1>(p.param), false));
                         });

// Split-K: at a shape with two tiles and k = 3000 step 10 says it splits, and its C is the same bit
// for bit in two processes (fixed slice order, no atomics).
TEST(SgemmSplitKGpu, SplitsAndIsDeterministic) {
  REQUIRE_GPU();
  const std::string id = "sgemm/10_split_k";
  const auto steps = series_steps(false);
  if (std::find(steps.begin(), steps.end(), id) == steps.end()) GTEST_SKIP() << id << " is not registered";
  std::vector<std::vector<char>> results;
  for (int run = 0; run < 2; ++run) {
    ladder_test::TempDir dir;
    auto r = ladder_test::run_step(id, {"--m", "100", "--n", "132", "--k", "3000", "--seed", "5", "--json",
                                        "--no-ceiling", "--reps", "2", "--warmup", "0", "--dump", dir.path()});
    ASSERT_VERIFIED(id, r);
    EXPECT_NE(ladder_test::json_string(r.json, "choice").find(" slices of "), std::string::npos) << r.json;
    results.push_back(ladder_test::read_npy(dir.path() + "/C.npy").data);
  }
  EXPECT_TRUE(results[0] == results[1]) << "two runs of " << id << " gave different bits";
}

// Step 11 onward (main series): the shape classes. m <= 16 — B streamed, k in slices summed by the
// last block (m = 1, 8, 5, 16; 16-byte and 4-byte columns, k not a multiple of 4); n <= 16 — A
// streamed (n = 1, 7, 16; rows of A 16-byte aligned or not); m and n <= 16 with k long; a small C
// with long k (64 x 64 tiles split); and the bars' shapes (1, 4096, 4096), (4096, 1, 4096),
// (8, 4096, 4096), (64, 64, 65536).
std::vector<std::string> main_steps_from_11() {
  std::vector<std::string> out;
  for (const auto& id : series_steps(false))
    if (series_of(id) == "main" && id >= "sgemm/11") out.push_back(id);
  return out;
}

INSTANTIATE_TEST_SUITE_P(ShapeClasses, SgemmGpu,
                         testing::Combine(testing::ValuesIn(main_steps_from_11()),
                                          testing::Values(Shape{1, 4096, 4096}, Shape{4096, 1, 4096},
                                                          Shape{8, 4096, 4096}, Shape{1, 1000, 5003},
                                                          Shape{5, 333, 4099}, Shape{16, 130, 1000},
                                                          Shape{1000, 7, 5001}, Shape{333, 16, 4100},
                                                          Shape{3, 3, 70000}, Shape{1, 1, 100000},
                                                          Shape{64, 64, 65536}, Shape{100, 70, 20000})),
                         [](const testing::TestParamInfo<SgemmGpu::ParamType>& p) {
                           return ladder_test::param_name(std::get<0>(p.param), shape_name(std::get<1>(p.param), false));
                         });

// Step 11 names its class in the choice, and its split paths (the last-block sum, the wide sum) give
// the same bits in two processes. The shapes take the same class on every GPU with cp.async (under
// every device profile): 512 x 512 x 8192 has 8 to 16 tiles of step 10's tilings, fewer than
// the block slots of the smallest (an RTX 3060: 28 SMs), so it splits; at 1024 x 1024 a GPU with
// about as many slots as tiles runs step 09 unsplit.
TEST(SgemmShapeClassesGpu, NamesItsClassAndIsDeterministic) {
  REQUIRE_GPU();
  const std::string id = "sgemm/11_shape_classes";
  const auto steps = series_steps(false);
  if (std::find(steps.begin(), steps.end(), id) == steps.end()) GTEST_SKIP() << id << " is not registered";
  const struct {
    Shape s;
    const char* cls;     // how the choice begins: the class
    const char* kernel;  // and the kernel it names
    bool split;          // a path that adds slices: checked bit for bit over two runs
  } cases[] = {{{1, 1000, 5003}, "skinny m", "gemm_stream_b", true},
               {{8, 4096, 4096}, "skinny m", "gemm_stream_b", true},
               {{4096, 1, 4096}, "skinny n", "gemm_dot_rows", false},
               {{64, 64, 65536}, "few tiles, long k, small C", "tiles of 64x64", true},
               {{512, 512, 8192}, "few tiles, long k: step 10's", " slices of ", false},
               {{1000, 777, 333}, "waves of tiles: step 09's", "128x", false}};
  for (const auto& c : cases) {
    SCOPED_TRACE(shape_name(c.s, false));
    std::vector<std::vector<char>> results;
    for (int run = 0; run < (c.split ? 2 : 1); ++run) {
      ladder_test::TempDir dir;
      std::vector<std::string> args = size_args(c.s, false);
      for (const char* a : {"--seed", "7", "--json", "--no-ceiling", "--reps", "2", "--warmup", "0"}) args.push_back(a);
      if (c.split) args.insert(args.end(), {"--dump", dir.path()});
      auto r = ladder_test::run_step(id, args);
      ASSERT_VERIFIED(id, r);
      const std::string choice = ladder_test::json_string(r.json, "choice");
      EXPECT_EQ(choice.rfind(c.cls, 0), 0u) << r.json;
      EXPECT_NE(choice.find(c.kernel), std::string::npos) << r.json;
      if (c.split) results.push_back(ladder_test::read_npy(dir.path() + "/C.npy").data);
    }
    if (c.split) {
      EXPECT_TRUE(results[0] == results[1]) << "two runs of " << id << " gave different bits";
    }
  }
}

// Step 12 cuts the last wave of a C with more tiles than block slots into pieces of k: it names the
// cut in its choice, verifies, and gives the same bits in two processes (each tile's partials added
// in slice order, no float atomics). On the H100 without a profile both shapes are cut (step 09's
// 128 x 256 tiles: 153 tiles for 132 slots, 21 of them in 6 pieces); on other GPUs a shape that is not
// cut there is checked once (it verifies), and the test skips if neither is cut.
TEST(SgemmDynamicTailGpu, CutsTheLastWaveAndIsDeterministic) {
  REQUIRE_GPU();
  const std::string id = "sgemm/12_dynamic_tail";
  const auto steps = series_steps(false);
  if (std::find(steps.begin(), steps.end(), id) == steps.end()) GTEST_SKIP() << id << " is not registered";
  std::vector<std::string> not_cut;  // the choices of shapes this GPU runs uncut
  for (const Shape s : {Shape{2100, 2101, 3100}, Shape{2100, 2100, 3100}}) {
    SCOPED_TRACE(shape_name(s, false));
    std::vector<std::vector<char>> results;
    for (int run = 0; run < 2; ++run) {
      ladder_test::TempDir dir;
      std::vector<std::string> args = size_args(s, false);
      for (const char* a : {"--seed", "11", "--json", "--no-ceiling", "--reps", "3", "--warmup", "1", "--dump"})
        args.push_back(a);
      args.push_back(dir.path());
      auto r = ladder_test::run_step(id, args);
      ASSERT_VERIFIED(id, r);
      const std::string choice = ladder_test::json_string(r.json, "choice");
      const bool cut = choice.rfind("dynamic tail: ", 0) == 0;
      const bool h100 = ladder_test::seen_device().profile.empty() &&
                        ladder_test::json_string(r.json, "device") == "NVIDIA H100 80GB HBM3";
      if (h100) {
        EXPECT_TRUE(cut) << r.json;
      }
      if (!cut) {
        not_cut.push_back(shape_name(s, false) + ": " + choice);
        break;  // nothing to compare: the uncut path is step 11's, tested above
      }
      results.push_back(ladder_test::read_npy(dir.path() + "/C.npy").data);
    }
    if (results.size() == 2) {
      EXPECT_TRUE(results[0] == results[1]) << "two runs of " << id << " gave different bits";
    }
  }
  if (not_cut.size() == 2) GTEST_SKIP() << "this GPU cuts neither shape: " << not_cut[0] << "; " << not_cut[1];
}

// tf32_05 sends each shape class where its bound says: the skinny classes to step 11's fp32
// kernels; a small C with a long k, and a C of fewer than 17 tiles of 256 x 128 on an H100
// (512 x 512), to the TF32 split-K (aligned rows, and rows of A and B that are not 16-byte
// aligned); everything else (1024 x 1024: 32 tiles; 64 x 64 x 100, too short a k to split) to
// tf32_04's tensor-core tiles. Every class verifies against the TF32 bound and names its route in the choice.
TEST(SgemmTf32ShapeClassesGpu, RoutesEachClassAndVerifies) {
  REQUIRE_GPU();
  const std::string id = "sgemm/tf32_05_shape_classes";
  if (ladder_test::step_path(id).empty()) GTEST_SKIP() << id << " is not built";
  const struct {
    Shape s;
    const char* route;
  } cases[] = {{{1, 1000, 5003}, "gemm_stream_b"},          {{8, 4096, 4096}, "gemm_stream_b"},
               {{4096, 1, 4096}, "gemm_dot_rows"},          {{64, 64, 65536}, "TF32 split-K"},
               {{100, 70, 20001}, "TF32 split-K"},         {{64, 64, 100}, "tiles for the tensor cores"},
               {{512, 512, 8192}, "TF32 split-K"},          {{1024, 1024, 8192}, "tiles for the tensor cores"},
               {{1000, 777, 333}, "tiles for the tensor cores"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(shape_name(c.s, false));
    std::vector<std::string> args = size_args(c.s, false);
    for (const char* a : {"--json", "--no-ceiling", "--reps", "1", "--warmup", "0"}) args.push_back(a);
    const auto r = ladder_test::run_step(id, args);
    ASSERT_VERIFIED(id, r);  // a GPU without sm_90a: skipped with the requirement
    EXPECT_NE(ladder_test::json_string(r.json, "choice").find(c.route), std::string::npos) << r.json;
  }
}

// Step 09's default is computed from the device; on an H100 SXM (132 SMs, 227 KB per block) it
// must pick the tilings the tuning sweep measured fastest at the four shapes of the chapter (the
// table of H100 defaults the rule replaced). Other GPUs: the rule only has to fit (DeviceProfiles).
TEST(SgemmPipelinedGpu, RulePicksTheMeasuredTilesOnAnH100) {
  REQUIRE_GPU();
  const std::string id = "sgemm/09_pipelined";
  const auto steps = series_steps(false);
  if (std::find(steps.begin(), steps.end(), id) == steps.end()) GTEST_SKIP() << id << " is not registered";
  if (!ladder_test::seen_device().profile.empty())
    GTEST_SKIP() << "covered by the run without a profile (this test is about the real H100's choices; "
                    "DocumentedDefaults covers the profiles)";
  auto probe = ladder_test::run_step(id, {"--m", "1", "--n", "1", "--k", "1", "--no-ceiling", "--no-verify", "--reps",
                                          "1", "--warmup", "0", "--json"});
  ASSERT_EQ(probe.exit_code, 0) << probe.output;
  if (probe.json.find("\"device\":\"NVIDIA H100 80GB HBM3\"") == std::string::npos)
    GTEST_SKIP() << "not an H100 SXM: " << probe.json.substr(0, 200);
  const struct {
    Shape s;
    const char* tile;
  } cases[] = {{{4096, 4096, 4096}, "128x256x32_8x16_w64x64_s3: large"},
               {{4000, 3000, 2000}, "128x256x16_8x16_w64x64_s2: large"},
               {{4095, 4097, 1023}, "128x128x8_16x8_w64x64_s3: medium"},
               {{1024, 1024, 8192}, "128x128x16_8x8_w64x32_s3: few"}};
  for (const auto& c : cases) {
    std::vector<std::string> args = size_args(c.s, false);
    for (const char* a : {"--no-ceiling", "--no-verify", "--reps", "1", "--warmup", "0", "--json"}) args.push_back(a);
    auto r = ladder_test::run_step(id, args);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.json.find(std::string("\"choice\":\"") + c.tile), std::string::npos)
        << shape_name(c.s, false) << ": " << r.json;
  }
}

// --init integers: every product and partial sum exact, so C is checked for equality (sgemm.cuh):
// a kernel that drops or doubles one k-term fails at any K, where the TF32 magnitude bound cannot
// see it (SgemmTf32Bound). K = 4096 and 8191 (a last k-tile of 31), every main and tf32 step.
class SgemmIntegersGpu : public testing::TestWithParam<std::tuple<std::string, Shape>> {};

TEST_P(SgemmIntegersGpu, AreExact) {
  REQUIRE_GPU();
  const auto& [id, s] = GetParam();
  run_and_check(id, s, false, {"--init", "integers"});
}

INSTANTIATE_TEST_SUITE_P(AllSteps, SgemmIntegersGpu,
                         testing::Combine(testing::ValuesIn(series_steps(false)),
                                          testing::Values(Shape{64, 96, 4096}, Shape{67, 45, 8191})),
                         [](const testing::TestParamInfo<SgemmIntegersGpu::ParamType>& p) {
                           return ladder_test::param_name(std::get<0>(p.param), shape_name(std::get<1>(p.param), false));
                         });

class SgemmAnalyticGpu : public testing::TestWithParam<std::tuple<std::string, Shape>> {};

TEST_P(SgemmAnalyticGpu, MatchesTheClosedForm) {
  REQUIRE_GPU();
  const auto& [id, s] = GetParam();
  const bool aat = id.find("/aat_") != std::string::npos;
  run_and_check(id, s, aat, {"--init", "analytic"});
}

INSTANTIATE_TEST_SUITE_P(MainSteps, SgemmAnalyticGpu,
                         testing::Combine(testing::ValuesIn(series_steps(false)),
                                          testing::Values(Shape{7, 33, 65}, Shape{1000, 777, 333})),
                         [](const testing::TestParamInfo<SgemmAnalyticGpu::ParamType>& p) {
                           return ladder_test::param_name(std::get<0>(p.param), shape_name(std::get<1>(p.param), false));
                         });

INSTANTIATE_TEST_SUITE_P(AatSteps, SgemmAnalyticGpu,
                         testing::Combine(testing::ValuesIn(series_steps(true)),
                                          testing::Values(Shape{33, 33, 65}, Shape{1000, 1000, 333})),
                         [](const testing::TestParamInfo<SgemmAnalyticGpu::ParamType>& p) {
                           return ladder_test::param_name(std::get<0>(p.param), shape_name(std::get<1>(p.param), true));
                         });

// ---- aat side ladder ----------------------------------------------------------------------------

class SgemmAatGpu : public testing::TestWithParam<std::tuple<std::string, int64_t, int64_t>> {};

TEST_P(SgemmAatGpu, MatchesReference) {
  REQUIRE_GPU();
  const auto& [id, m, k] = GetParam();
  run_and_check(id, {m, m, k}, true);
}

std::string aat_case_name(const testing::TestParamInfo<SgemmAatGpu::ParamType>& p) {
  const auto& [id, m, k] = p.param;
  return ladder_test::param_name(id, shape_name(Shape{m, m, k}, true));
}

INSTANTIATE_TEST_SUITE_P(AatSteps, SgemmAatGpu,
                         testing::Combine(testing::ValuesIn(series_steps(true)),
                                          testing::Values(int64_t(1), int64_t(33), int64_t(1000), int64_t(4096)),
                                          testing::Values(int64_t(1), int64_t(33), int64_t(1000), int64_t(4096))),
                         [](const testing::TestParamInfo<SgemmAatGpu::ParamType>& p) { return aat_case_name(p); });

// ---- tunable steps: every candidate ---------------------------------------------------------------

// The candidates a step names when asked for one it does not know ("... (known: a, b, c)"); empty
// for a step that is not tunable. A step whose declared requirement the seen device lacks refuses
// before it reads --tile: `refusal` then holds judge()'s verdict on that refusal (a skip there, a
// failure on a device that meets the requirement) and the list is empty.
std::vector<std::string> tile_candidates(const std::string& id, ladder_test::Verdict* refusal) {
  auto r = ladder_test::run_step(id, {"--m", "1", "--n", "1", "--k", "1", "--no-ceiling", "--reps", "1",
                                      "--warmup", "0", "--tile", "no-such-tile"});
  if (r.output.find("is not tunable") != std::string::npos) return {};
  EXPECT_EQ(r.exit_code, 2) << r.output;
  if (!ladder_test::unsupported_line(r.output).empty()) {
    *refusal = ladder_test::judge(id, r);
    return {};
  }
  const size_t open = r.output.find("(known: ");
  const size_t close = open == std::string::npos ? open : r.output.find(')', open);
  if (close == std::string::npos) {
    ADD_FAILURE() << id << " is tunable but does not list its candidates after \"known:\"\n" << r.output;
    return {};
  }
  std::vector<std::string> names;
  std::string list = r.output.substr(open + 8, close - open - 8);
  for (size_t at = 0; at <= list.size();) {
    size_t comma = list.find(", ", at);
    if (comma == std::string::npos) comma = list.size();
    names.push_back(list.substr(at, comma - at));
    at = comma + 2;
  }
  return names;
}

class SgemmTileGpu : public testing::TestWithParam<std::string> {};

TEST_P(SgemmTileGpu, EveryCandidateMatchesReference) {
  REQUIRE_GPU();
  const std::string& id = GetParam();
  ladder_test::Verdict refusal;
  refusal.kind = ladder_test::Verdict::verified;  // no refusal
  const std::vector<std::string> tiles = tile_candidates(id, &refusal);
  if (refusal.kind == ladder_test::Verdict::skipped) GTEST_SKIP() << refusal.reason;
  ASSERT_NE(refusal.kind, ladder_test::Verdict::failed) << refusal.reason;
  ASSERT_FALSE(tiles.empty()) << id << " is declared TUNABLE but lists no --tile candidates";
  std::vector<std::string> skipped;  // candidates this GPU cannot run (its requirement, its shared memory)
  int runs = 0;
  for (const std::string& tile : tiles)
    for (const Shape& s : {Shape{67, 45, 33}, Shape{131, 133, 600}, Shape{260, 516, 600}}) {
      SCOPED_TRACE(tile + " at " + shape_name(s, false));
      ++runs;
      run_and_check(id, s, false, {"--tile", tile}, &skipped);
    }
  SKIP_IF_ALL_SKIPPED(runs, skipped);
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SgemmTileGpu);  // the TUNABLE list, as cpu_contract_test checks it
INSTANTIATE_TEST_SUITE_P(MainSteps, SgemmTileGpu, testing::ValuesIn(ladder_test::tunable_steps("sgemm")),
                         [](const testing::TestParamInfo<std::string>& p) {
                           return ladder_test::param_name(p.param, "tiles");
                         });

// tf32_04's comparison variants at a shape where they do what they are for, which the awkward sizes
// above are too small for: more tiles than SMs, not a whole number of waves, so _sk splits the
// last wave's tiles by k steps (some units in two pieces, one finishing with the other's partial
// sums) and _tail cuts them into equal k ranges (at k = 1000, 32 k steps: 3 on 132 SMs, each piece
// but the first leaving its partial sums to it; its choice is checked where tail_parts_of cuts on
// this GPU's SM count), and an even number of tile columns, so _c2 runs clusters of two
// blocks; n % 4 == 0, so _tma stores C through the copy engine (the second shape with a clipped last
// tile row); _ov runs its slice-by-slice overlapped k loop over tiles of one k step (k = 8) and
// four (k = 100). Exact with integer inputs, and verified with random ones; each names what it ran
// in its choice.
TEST(SgemmTf32WgmmaVariantsGpu, EachVariantVerifiesWhereItApplies) {
  REQUIRE_GPU();
  const std::string id = "sgemm/tf32_04_wgmma_specialized";
  if (ladder_test::step_path(id).empty()) GTEST_SKIP() << id << " is not built";
  const ladder_test::SeenDevice device = ladder_test::seen_device();
  ASSERT_GT(device.sm_count, 0);
  // 8 tile columns of 128; rows of 256 for about 1.5 waves of 256 x 128 tiles, one tile past half.
  const int64_t rows = (3 * device.sm_count / 2 + 1 + 7) / 8;
  ASSERT_NE(rows * 8 % device.sm_count, 0);
  const struct {
    const char* tile;
    const char* choice;
    int64_t k[2];  // of the two shapes
  } variants[] = {{"256x128x32_s4_sk", "stream-K over the first", {100, 8}},
                  {"256x128x32_s4_tail", " k ranges", {1000, 1000}},
                  {"256x128x32_s4_c2", "clusters of 2 blocks", {100, 8}},
                  {"256x128x32_s4_tma", "C stored by TMA", {100, 8}},
                  {"256x128x32_s4_ov", "256x128x32_s4_ov (--tile)", {100, 8}}};
  // Whether this GPU's SM count lets _tail cut the leftover tiles (sgemm.cu's rule, 32 k steps).
  const bool tail_splits = sgemm::tail_parts_of(rows * 8, device.sm_count, (1000 + 31) / 32) > 1;
  for (const auto& v : variants)
    for (const Shape& s : {Shape{256 * rows, 1024, v.k[0]}, Shape{256 * rows - 3, 1024, v.k[1]}})
      for (const char* init : {"integers", "random"}) {
        SCOPED_TRACE(std::string(v.tile) + " at " + shape_name(s, false) + ", " + init);
        std::vector<std::string> args = size_args(s, false);
        for (const char* a : {"--json", "--no-ceiling", "--reps", "2", "--warmup", "1", "--tile", v.tile, "--init", init})
          args.push_back(a);
        const auto r = ladder_test::run_step(id, args);
        ASSERT_VERIFIED(id, r);  // a GPU without sm_90a: skipped with the requirement
        if (std::string(v.tile) != "256x128x32_s4_tail" || tail_splits) {
          EXPECT_NE(ladder_test::json_string(r.json, "choice").find(v.choice), std::string::npos) << r.json;
        }
        if (std::string(init) == "integers") {
          EXPECT_EQ(ladder_test::json_number(r.json, "max_err"), 0.0) << r.output;
        }
      }
}

// tf32_03/04 address their tiles by TMA's signed 32-bit coordinates: a side past 2^31 - 256 exits 2
// naming the limit, before anything is allocated (k = 2^31 at m = n = 1 would need only 16 GB, and
// would otherwise wrap and read zeros).
TEST(SgemmTmaLimits, SidesPastTheCoordinatesExitTwo) {
  REQUIRE_GPU();
  for (const char* id : {"sgemm/tf32_03_wgmma_tma", "sgemm/tf32_04_wgmma_specialized"}) {
    ASSERT_FALSE(ladder_test::step_path(id).empty()) << id << " is not built (sgemm/CMakeLists.txt always adds it)";
    for (const std::vector<std::string>& size : {std::vector<std::string>{"--m", "1", "--n", "1", "--k", "2^31"},
                                                 {"--m", "2^31", "--n", "1", "--k", "1"},
                                                 {"--m", "1", "--n", "2147483393", "--k", "4"}}) {
      std::vector<std::string> args = size;
      args.insert(args.end(), {"--no-ceiling", "--reps", "1", "--warmup", "0"});
      const auto r = ladder_test::run_step(id, args);
      const ladder_test::Verdict v = ladder_test::judge(id, r);
      if (v.kind == ladder_test::Verdict::skipped) GTEST_SKIP() << v.reason;
      EXPECT_EQ(r.exit_code, 2) << r.output;
      EXPECT_NE(r.output.find("TMA's 32-bit coordinates"), std::string::npos) << r.output;
    }
  }
}

// ---- the ceiling paths --------------------------------------------------------------------------

TEST(SgemmCeilingGpu, AatReportsTheCopyCeilingAndCublasBesideIt) {
  REQUIRE_GPU();
  for (const auto& id : series_steps(true)) {
    auto r = ladder_test::run_step(id, {"--m", "1000", "--k", "33", "--json", "--reps", "2", "--warmup", "1"});
    ASSERT_VERIFIED(id, r);
    // The copy ceiling (every record has a "ceiling" key, null or not: its name is what is checked).
    EXPECT_NE(r.json.find("\"ceiling\":{\"name\":\"copy"), std::string::npos) << r.json;
    EXPECT_GT(ladder_test::json_number(r.json, "cublas_gbps"), 0.0) << r.json;
    EXPECT_GT(ladder_test::json_number(r.json, "pct_of_ceiling"), 0.0) << r.json;
  }
}

TEST(SgemmCeilingGpu, CublasStepRunsAtItsOwnCeiling) {
  REQUIRE_GPU();
  auto r = ladder_test::run_step("sgemm/00_cublas", {"--m", "2048", "--n", "2048", "--k", "2048", "--json",
                                                     "--reps", "5", "--warmup", "2"});
  ASSERT_VERIFIED("sgemm/00_cublas", r);
  EXPECT_NE(r.json.find("cuBLAS SGEMM fp32"), std::string::npos) << r.json;
  const double pct = ladder_test::json_number(r.json, "pct_of_ceiling");
  EXPECT_GT(pct, 80.0) << r.json;   // the same call timed twice in one process
  EXPECT_LT(pct, 125.0) << r.json;
}

// The tf32 series: its ceiling is cuBLAS TF32, checked against the fp64 CPU elements before it is
// timed; tf32_00 (the same call) runs at its own ceiling; every tf32 step reports a choice and its
// measured error against fp64, within the TF32 bound.
TEST(SgemmCeilingGpu, Tf32StepsReportTheCublasTf32Ceiling) {
  REQUIRE_GPU();
  std::vector<std::string> skipped;  // steps this GPU cannot run (their declared requirement)
  int runs = 0;
  for (const auto& id : series_steps(false)) {
    if (series_of(id) != "tf32") continue;
    ++runs;
    auto r = ladder_test::run_step(id, {"--m", "1024", "--n", "768", "--k", "512", "--json", "--reps", "3",
                                        "--warmup", "1"});
    const size_t before = skipped.size();
    ASSERT_TRUE(ladder_test::verified_or_justified(id, r, id, &skipped));
    if (skipped.size() > before) continue;
    EXPECT_NE(r.json.find("\"ceiling\":{\"name\":\"cuBLAS TF32"), std::string::npos) << r.json;
    EXPECT_GT(ladder_test::json_number(r.json, "pct_of_ceiling"), 0.0) << r.json;
    EXPECT_GT(ladder_test::json_number(r.json, "cublas_tf32_max_rel_err_fp64"), 0.0) << r.json;
    const double err = ladder_test::json_number(r.json, "max_rel_err_fp64");
    EXPECT_GT(err, 0.0) << r.json;  // TF32 is not exact on random inputs
    EXPECT_LE(err, sgemm::bound_tf32_vs_exact(512).c * 512 * ladder::kFloatEps) << r.json;
    if (id == "sgemm/tf32_00_cublas") {
      const double pct = ladder_test::json_number(r.json, "pct_of_ceiling");
      EXPECT_GT(pct, 80.0) << r.json;
      EXPECT_LT(pct, 125.0) << r.json;
    }
  }
  ASSERT_GT(runs, 0) << "no tf32 step is registered";
  SKIP_IF_ALL_SKIPPED(runs, skipped);
}

}  // namespace
