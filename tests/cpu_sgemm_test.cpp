// sgemm's CPU side: the closed forms of the post's analytic inputs against brute-force integer sums,
// the fp64 reference rows and columns against long-double loops and against the closed forms, the
// error bounds against float dot products evaluated in several orders, the sampled rows and
// columns, the tile grid, the tunable-step lookup, and the usage errors a step gives before it
// touches a device.
#include "common/check.h"
#include "common/random.h"
#include "common/verify.h"
#include "sgemm/sgemm.cuh"
#include "tests/step_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

// sum_{p<k} (i + p)(p - j) and sum_{p<k} (i + p)|p - j|, term by term in 64-bit integers.
void brute_gemm(int64_t i, int64_t j, int64_t k, int64_t* value, int64_t* magnitude) {
  int64_t v = 0, g = 0;
  for (int64_t p = 0; p < k; ++p) {
    v += (i + p) * (p - j);
    g += (i + p) * std::llabs(p - j);
  }
  *value = v;
  *magnitude = g;
}

TEST(SgemmAnalytic, ClosedFormMatchesTermByTermSums) {
  for (int64_t k : {1, 2, 3, 7, 32, 33, 100, 4096})
    for (int64_t i : {0, 1, 5, 31, 1000, 4095})
      for (int64_t j : {int64_t(0), int64_t(1), k - 1, k, k + 5, int64_t(777), int64_t(4095)}) {
        int64_t v = 0, g = 0;
        brute_gemm(i, j, k, &v, &g);
        const sgemm::Exact e = sgemm::analytic_gemm(i, j, k);
        EXPECT_EQ(e.value, static_cast<double>(v)) << "i=" << i << " j=" << j << " k=" << k;
        EXPECT_EQ(e.magnitude, static_cast<double>(g)) << "i=" << i << " j=" << j << " k=" << k;
      }
}

TEST(SgemmAnalytic, PostsFormulaAtItsSize) {
  // The post's C[i][j] = K(K-1)(2K-1)/6 + (i - j) K(K-1)/2 - K i j, at its K = 4096 corner, where the
  // terms reach ~7e10 and cancel.
  const int64_t K = 4096, i = 4095, j = 4095;
  const double want = double(K) * (K - 1) * (2 * K - 1) / 6 + double(i - j) * K * (K - 1) / 2 -
                      double(K) * i * j;
  EXPECT_EQ(sgemm::analytic_gemm(i, j, K).value, want);
  EXPECT_LT(sgemm::analytic_gemm(i, j, K).value, 0.0);
}

TEST(SgemmAnalytic, AatClosedFormMatchesTermByTermSums) {
  for (int64_t k : {1, 2, 32, 33, 1000})
    for (int64_t i : {0, 1, 999})
      for (int64_t j : {0, 7, 999}) {
        int64_t v = 0;
        for (int64_t p = 0; p < k; ++p) v += (i + p) * (j + p);
        const sgemm::Exact e = sgemm::analytic_aat(i, j, k);
        EXPECT_EQ(e.value, static_cast<double>(v)) << i << " " << j << " " << k;
        EXPECT_EQ(e.magnitude, e.value);  // every term is >= 0
      }
}

TEST(SgemmAnalytic, FitsOnlyWhileEveryInputIsAnExactFloat) {
  const int64_t e24 = int64_t(1) << 24;
  EXPECT_TRUE(sgemm::analytic_fits(4096, 4096, 4096));
  EXPECT_TRUE(sgemm::analytic_fits(e24 + 1, 1, 1));       // A's largest value: m - 1 = 2^24
  EXPECT_FALSE(sgemm::analytic_fits(e24 + 2, 1, 1));
  EXPECT_TRUE(sgemm::analytic_fits(e24 - 99, 1, 101));    // (m - 1) + (k - 1) = 2^24
  EXPECT_FALSE(sgemm::analytic_fits(e24 - 98, 1, 101));
  EXPECT_TRUE(sgemm::analytic_fits(1, e24 + 1, 1));       // B's smallest value: -(n - 1)
  EXPECT_FALSE(sgemm::analytic_fits(1, e24 + 2, 1));
  // The values themselves: 2^24 is exact, 2^24 + 1 is not.
  EXPECT_EQ(static_cast<int64_t>(static_cast<float>(e24)), e24);
  EXPECT_NE(static_cast<int64_t>(static_cast<float>(e24 + 1)), e24 + 1);
}

// Long-double reference of one element, for the fp64 reference's own test.
void brute_element(const sgemm::Operands& op, int64_t i, int64_t j, long double* v, long double* g) {
  long double s = 0, a = 0;
  for (int64_t p = 0; p < op.k; ++p) {
    const long double x = op.A[i * op.k + p];
    const long double y = op.B ? op.B[p * op.n + j] : op.A[j * op.k + p];
    s += x * y;
    a += std::fabs(x * y);
  }
  *v = s;
  *g = a;
}

void expect_reference_matches(const sgemm::Operands& op) {
  const std::vector<int64_t> rows = {0, op.m / 2, op.m - 1}, cols = {0, op.n / 3, op.n - 1};
  std::vector<double> rr(rows.size() * op.n), rg(rr.size()), cr(cols.size() * op.m), cg(cr.size());
  sgemm::reference_rows(op, rows, rr.data(), rg.data());
  sgemm::reference_cols(op, cols, cr.data(), cg.data());
  for (size_t r = 0; r < rows.size(); ++r)
    for (int64_t j = 0; j < op.n; ++j) {
      long double v, g;
      brute_element(op, rows[r], j, &v, &g);
      ASSERT_NEAR(rr[r * op.n + j], static_cast<double>(v), 1e-12 * static_cast<double>(g) + 1e-300);
      ASSERT_NEAR(rg[r * op.n + j], static_cast<double>(g), 1e-12 * static_cast<double>(g) + 1e-300);
    }
  for (size_t c = 0; c < cols.size(); ++c)
    for (int64_t i = 0; i < op.m; ++i) {
      long double v, g;
      brute_element(op, i, cols[c], &v, &g);
      ASSERT_NEAR(cr[c * op.m + i], static_cast<double>(v), 1e-12 * static_cast<double>(g) + 1e-300);
      ASSERT_NEAR(cg[c * op.m + i], static_cast<double>(g), 1e-12 * static_cast<double>(g) + 1e-300);
    }
}

TEST(SgemmReference, RowsAndColumnsMatchLongDoubleLoops) {
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {37, 29, 53}, {5, 1100, 3},
                         {130, 7, 513}}) {
    std::vector<float> A(m * k), B(k * n);
    ladder::fill_uniform(A.data(), m * k, 99, 1, -1.f, 1.f);
    ladder::fill_uniform(B.data(), k * n, 99, 2, -1.f, 1.f);
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
    expect_reference_matches({A.data(), B.data(), m, n, k});
    expect_reference_matches({A.data(), nullptr, m, m, k});  // C = A·Aᵀ
  }
}

TEST(SgemmReference, MatchesTheClosedFormOnThePostsInputs) {
  // Integer products below 2^21 and sums below 2^53: the fp64 reference is exact here.
  const int64_t m = 300, n = 200, k = 1000;
  std::vector<float> A(m * k), B(k * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) A[i * k + p] = static_cast<float>(i + p);
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) B[p * n + j] = static_cast<float>(p - j);
  const std::vector<int64_t> rows = {0, 17, m - 1}, cols = {0, 150, n - 1};
  std::vector<double> rr(rows.size() * n), rg(rr.size()), cr(cols.size() * m), cg(cr.size());
  sgemm::reference_rows({A.data(), B.data(), m, n, k}, rows, rr.data(), rg.data());
  sgemm::reference_cols({A.data(), B.data(), m, n, k}, cols, cr.data(), cg.data());
  for (size_t r = 0; r < rows.size(); ++r)
    for (int64_t j = 0; j < n; ++j) {
      const sgemm::Exact e = sgemm::analytic_gemm(rows[r], j, k);
      ASSERT_EQ(rr[r * n + j], e.value) << rows[r] << "," << j;
      ASSERT_EQ(rg[r * n + j], e.magnitude) << rows[r] << "," << j;
    }
  for (size_t c = 0; c < cols.size(); ++c)
    for (int64_t i = 0; i < m; ++i) {
      const sgemm::Exact e = sgemm::analytic_gemm(i, cols[c], k);
      ASSERT_EQ(cr[c * m + i], e.value) << i << "," << cols[c];
      ASSERT_EQ(cg[c * m + i], e.magnitude) << i << "," << cols[c];
    }
  // And A·Aᵀ.
  std::vector<double> ar(m), ag(m);
  sgemm::reference_rows({A.data(), nullptr, m, m, k}, {42}, ar.data(), ag.data());
  for (int64_t j = 0; j < m; ++j) ASSERT_EQ(ar[j], sgemm::analytic_aat(42, j, k).value) << j;
}

// A float dot product in four orders: sequential, sequential with FMA, pairwise, and in blocks of 8
// (the tiled kernels' shape).
std::vector<float> float_dots(const std::vector<float>& x, const std::vector<float>& y) {
  const size_t k = x.size();
  float seq = 0, fma = 0, blocked = 0;
  for (size_t p = 0; p < k; ++p) {
    seq += x[p] * y[p];
    fma = std::fmaf(x[p], y[p], fma);
  }
  for (size_t b = 0; b < k; b += 8) {
    float part = 0;
    for (size_t p = b; p < std::min(k, b + 8); ++p) part = std::fmaf(x[p], y[p], part);
    blocked += part;
  }
  std::vector<float> t(k);
  for (size_t p = 0; p < k; ++p) t[p] = x[p] * y[p];
  for (size_t w = 1; w < k; w *= 2)
    for (size_t p = 0; p + w < k; p += 2 * w) t[p] += t[p + w];
  return {seq, fma, blocked, k ? t[0] : 0.0f};
}

TEST(SgemmBounds, HoldForFloatDotProductsInAnyOrder) {
  for (int64_t k : {1, 7, 33, 1000, 4096, 65536}) {
    std::vector<float> x(k), y(k);
    for (uint64_t trial = 0; trial < 20; ++trial) {
      ladder::fill_uniform(x.data(), k, trial, 1, -1.f, 1.f);
      ladder::fill_uniform(y.data(), k, trial, 2, -1.f, 1.f);
      double exact = 0, mag = 0;
      for (int64_t p = 0; p < k; ++p) {
        exact += double(x[p]) * y[p];
        mag += std::fabs(double(x[p]) * y[p]);
      }
      const std::vector<float> got = float_dots(x, y);
      const ladder::ErrorBound ex = sgemm::bound_vs_exact(k), bl = sgemm::bound_vs_cublas(k);
      for (float g : got) {
        EXPECT_LE(std::fabs(g - exact), ex.c * ex.terms * ex.eps * mag) << "k=" << k;
        for (float h : got) EXPECT_LE(std::fabs(g - double(h)), bl.c * bl.terms * bl.eps * mag) << "k=" << k;
      }
    }
  }
}

TEST(SgemmBounds, ConstantsFollowFromGammaK) {
  const double u = ladder::kFloatEps;
  EXPECT_NEAR(sgemm::bound_vs_exact(1).c, 1.01, 1e-6);
  EXPECT_NEAR(sgemm::bound_vs_cublas(1).c, 2.0, 1e-6);
  const double ku = 4096 * u, gamma = ku / (1 - ku);
  EXPECT_DOUBLE_EQ(sgemm::bound_vs_cublas(4096).c, 2.0 / ((1 - ku) * (1 - gamma)));
  EXPECT_LT(sgemm::bound_vs_cublas(4096).c, 2.001);
  EXPECT_EQ(sgemm::bound_vs_cublas(4096).terms, 4096.0);
  EXPECT_EQ(sgemm::bound_vs_cublas(4096).eps, u);
  // Grows with K, and stops growing at K u = 1/4.
  EXPECT_LT(sgemm::bound_vs_cublas(1 << 16).c, sgemm::bound_vs_cublas(1 << 20).c);
  EXPECT_EQ(sgemm::bound_vs_cublas(int64_t(1) << 22).c, sgemm::bound_vs_cublas(int64_t(1) << 30).c);
  EXPECT_NEAR(sgemm::bound_vs_cublas(int64_t(1) << 22).c, 4.0, 1e-12);
}

TEST(SgemmBounds, CatchAnElementOffByOnePercentOfItsMagnitude) {
  // At K = 4096 the allowed error is 2.001 * 4096 * 2^-24 = 0.05% of sum|terms|.
  const double ref = 3.0, mag = 1000.0;
  const float good = static_cast<float>(ref + 0.0004 * mag), bad = static_cast<float>(ref + 0.01 * mag);
  EXPECT_TRUE(ladder::verify_bounded(&good, &ref, &mag, 1, sgemm::bound_vs_cublas(4096), {1}).ok);
  EXPECT_FALSE(ladder::verify_bounded(&bad, &ref, &mag, 1, sgemm::bound_vs_cublas(4096), {1}).ok);
  const float nan = std::nanf("");
  EXPECT_FALSE(ladder::verify_bounded(&nan, &ref, &mag, 1, sgemm::bound_vs_cublas(4096), {1}).ok);
}

TEST(SgemmSampling, RandomDistinctSortedAndAlwaysTheLast) {
  for (int64_t extent : {int64_t(100), int64_t(4096), int64_t(1) << 40}) {
    const auto s = sgemm::sample_indices(extent, 8, 7, 11);
    ASSERT_EQ(s.size(), 9u);
    EXPECT_EQ(s.back(), extent - 1);
    EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
    EXPECT_EQ(std::set<int64_t>(s.begin(), s.end()).size(), s.size());
    EXPECT_GE(s.front(), 0);
    EXPECT_EQ(s, sgemm::sample_indices(extent, 8, 7, 11));   // a function of the seed
    EXPECT_NE(s, sgemm::sample_indices(extent, 8, 8, 11));   // fresh for another seed
  }
  EXPECT_EQ(sgemm::sample_indices(1, 8, 7, 11), std::vector<int64_t>{0});
  EXPECT_EQ(sgemm::sample_indices(9, 8, 7, 11).size(), 9u);  // every index
}

TEST(SgemmGrid, CountsTilesRowByRow) {
  sgemm::TileGrid g = sgemm::tile_grid(4096, 4096, 128, 128);
  EXPECT_EQ(g.blocks, 1024u);
  EXPECT_EQ(g.tiles_n, 32);
  g = sgemm::tile_grid(1000, 777, 8, 32);  // partial tiles round up
  EXPECT_EQ(g.blocks, 125u * 25u);
  EXPECT_EQ(g.tiles_n, 25);
  g = sgemm::tile_grid(10000000, 1, 8, 32);  // 1.25M tile rows: past gridDim.y, fine on x
  EXPECT_EQ(g.blocks, 1250000u);
  EXPECT_THROW(sgemm::tile_grid(int64_t(1) << 40, int64_t(1) << 40, 32, 32), ladder::UsageError);
}

void launch_a(const sgemm::Gemm&) {}
void launch_b(const sgemm::Gemm&) {}

// The grouped tile order (tf32_04's persistent loop) must visit every tile exactly once, for any
// band height (including bands taller than C and a short last band), and group 1 must be the row-by-
// row order of tile_origin.
TEST(SgemmGrid, GroupedOrderVisitsEveryTileOnce) {
  for (int64_t tiles_m : {1, 2, 7, 16, 33})
    for (int64_t tiles_n : {1, 3, 32, 65})
      for (int64_t group : {1, 2, 4, 8, 16, 64}) {
        std::set<std::pair<int64_t, int64_t>> seen;
        for (int64_t t = 0; t < tiles_m * tiles_n; ++t) {
          const sgemm::TileOrigin o = sgemm::grouped_tile_origin(t, tiles_m, tiles_n, group, 256, 128);
          ASSERT_EQ(o.row % 256, 0);
          ASSERT_EQ(o.col % 128, 0);
          ASSERT_LT(o.row / 256, tiles_m) << tiles_m << "x" << tiles_n << " group " << group << " tile " << t;
          ASSERT_LT(o.col / 128, tiles_n) << tiles_m << "x" << tiles_n << " group " << group << " tile " << t;
          seen.insert({o.row, o.col});
          if (group == 1) {
            EXPECT_EQ(o.row, t / tiles_n * 256);
            EXPECT_EQ(o.col, t % tiles_n * 128);
          }
        }
        EXPECT_EQ(int64_t(seen.size()), tiles_m * tiles_n) << tiles_m << "x" << tiles_n << " group " << group;
      }
  // Within a band, consecutive tiles go down the band's rows first.
  const sgemm::TileOrigin a = sgemm::grouped_tile_origin(0, 32, 64, 8, 256, 128);
  const sgemm::TileOrigin b = sgemm::grouped_tile_origin(1, 32, 64, 8, 256, 128);
  const sgemm::TileOrigin c = sgemm::grouped_tile_origin(8, 32, 64, 8, 256, 128);
  EXPECT_EQ(b.row, a.row + 256);
  EXPECT_EQ(b.col, a.col);
  EXPECT_EQ(c.row, 0);
  EXPECT_EQ(c.col, 128);
}

// tf32_04 _tail: the last wave's units cut in the number of k ranges that ends soonest.
TEST(SgemmGrid, TailPartsEndTheLaunchSoonest) {
  EXPECT_EQ(sgemm::tail_parts_of(2048, 132, 256), 3);  // 8192^3: 68 left; thirds end after 2/3, quarters 3/4
  EXPECT_EQ(sgemm::tail_parts_of(512, 132, 128), 1);   // 4096^3: 116 left end after 1 however cut
  EXPECT_EQ(sgemm::tail_parts_of(133, 132, 256), 4);   // one tile left: quarters, one round of 1/4
  EXPECT_EQ(sgemm::tail_parts_of(133, 132, 31), 3);    // ... but a quarter would have under 8 k steps
  EXPECT_EQ(sgemm::tail_parts_of(133, 132, 15), 1);    // and a half too
  EXPECT_EQ(sgemm::tail_parts_of(264, 132, 256), 1);   // whole waves: nothing to cut
  EXPECT_EQ(sgemm::tail_parts_of(100, 132, 256), 1);   // under one wave: one unit a block already
  EXPECT_EQ(sgemm::tail_parts_of(115, 114, 256), 3);   // 114 workers: 4 does not divide them
  EXPECT_EQ(sgemm::tail_parts_of(3 * 131 + 1, 131, 256), 1);  // 131 workers: no part count divides them
}

TEST(SgemmGrid, SquareBandRowsFromTheResidentTiles) {
  // 132 persistent 256 x 128 tiles: sqrt(132 x 128 / 256) = 8.1 -> 8 tile rows (2048 x ~2100 of C).
  EXPECT_EQ(sgemm::square_band_rows(132, 32, 256, 128), 8);
  EXPECT_EQ(sgemm::square_band_rows(132, 5, 256, 128), 5);   // no more rows than C has
  EXPECT_EQ(sgemm::square_band_rows(1, 32, 256, 128), 1);    // at least one
  EXPECT_EQ(sgemm::square_band_rows(264, 64, 128, 128), 16);  // square tiles: sqrt(264) = 16.2
}

TEST(SgemmTunable, PicksByNameOrDefaultAndListsTheKnownOnes) {
  const sgemm::TileCandidate c[] = {{"a1", launch_a}, {"b2", launch_b}};
  EXPECT_EQ(sgemm::pick_tile("sgemm/x", "", c, 2, "b2"), &launch_b);
  EXPECT_EQ(sgemm::pick_tile("sgemm/x", "a1", c, 2, "b2"), &launch_a);
  try {
    sgemm::pick_tile("sgemm/x", "zz", c, 2, "b2");
    FAIL() << "no UsageError";
  } catch (const ladder::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("(known: a1, b2)"), std::string::npos) << e.what();
  }
}

TEST(SgemmTunable, PicksFromAStepsOwnTable) {
  struct Candidate {
    const char* name;
    int value;
  };
  const Candidate c[] = {{"a1", 1}, {"b2", 2}};
  EXPECT_EQ(sgemm::pick_candidate("sgemm/x", "", c, "b2").value, 2);
  EXPECT_EQ(sgemm::pick_candidate("sgemm/x", "a1", c, "b2").value, 1);
  try {
    sgemm::pick_candidate("sgemm/x", "zz", c, "b2");
    FAIL() << "no UsageError";
  } catch (const ladder::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("sgemm/x: unknown --tile 'zz' (known: a1, b2)"), std::string::npos)
        << e.what();
  }
}

TEST(SgemmProblem, FlopsAndBytes) {
  EXPECT_DOUBLE_EQ(sgemm::flops(4096, 4096, 4096), 2.0 * 4096.0 * 4096.0 * 4096.0);
  EXPECT_DOUBLE_EQ(sgemm::aat_min_bytes(8192, 32), 4.0 * 8192 * 32 + 4.0 * 8192.0 * 8192.0);
}

// Usage errors that need no device: the step's series decides its flags, --tile needs a tunable
// step, --init analytic needs exact inputs.
std::vector<std::string> sgemm_steps(bool aat) {
  std::vector<std::string> out;
  for (const auto& id : ladder_test::steps_of("sgemm"))
    if ((id.find("/aat_") != std::string::npos) == aat) out.push_back(id);
  return out;
}

TEST(SgemmUsage, SeriesFlagsTileAndAnalyticLimits) {
  ASSERT_FALSE(sgemm_steps(true).empty()) << "no aat steps registered";
  ASSERT_FALSE(sgemm_steps(false).empty()) << "no sgemm steps registered";
  for (const auto& id : sgemm_steps(true)) {
    auto r = ladder_test::run_step(id, {"--m", "8", "--n", "8"});
    EXPECT_EQ(r.exit_code, 2) << id << "\n" << r.output;  // C = A·Aᵀ has no n
    r = ladder_test::run_step(id, {"--tile", "64x64x8_4x4"});
    EXPECT_EQ(r.exit_code, 2) << id << "\n" << r.output;
    r = ladder_test::run_step(id, {"--help"});
    EXPECT_EQ(r.exit_code, 0) << id;
    EXPECT_EQ(r.output.find("--n N"), std::string::npos) << r.output;
  }
  for (const auto& id : sgemm_steps(false)) {
    // Steps 00-05 are not tunable (later steps may be: either way this is a usage error).
    auto r = ladder_test::run_step(id, {"--tile", "64x64x8_4x4", "--m", "2^24", "--init", "analytic"});
    EXPECT_EQ(r.exit_code, 2) << id << "\n" << r.output;
    if (id < "sgemm/06") {
      EXPECT_NE(r.output.find("is not tunable"), std::string::npos) << r.output;
    }
    r = ladder_test::run_step(id, {"--m", "2^24", "--k", "3", "--init", "analytic"});  // 2^24 + 1
    EXPECT_EQ(r.exit_code, 2) << id << "\n" << r.output;
    EXPECT_NE(r.output.find("exact float"), std::string::npos) << r.output;
    r = ladder_test::run_step(id, {"--init", "ones"});
    EXPECT_EQ(r.exit_code, 2) << id << "\n" << r.output;
  }
}

// Step 13 is step 11's source assembled with ptxas --register-usage-level=0 where the toolkit has
// the option (sgemm/CMakeLists.txt). Its copy of step 09's 128 x 256 x 32 kernel must then differ
// from step 11's, instruction by instruction (the same source, another assembly): equal code would
// mean the option never reached ptxas. Read from the built executables with cuobjdump -sass.
TEST(SgemmBuild, Step13AssemblesStep09sKernelItsOwnWay) {
#ifndef LADDER_PTXAS_REGISTER_USAGE_LEVEL
  GTEST_SKIP() << "this toolkit's ptxas has no --register-usage-level: step 13 builds as step 11";
#else
  const std::string eleven = "sgemm/11_shape_classes", thirteen = "sgemm/13_ptxas_registers";
  if (ladder_test::step_path(eleven).empty() || ladder_test::step_path(thirteen).empty())
    GTEST_SKIP() << "steps 11 and 13 are not both in this build";
  const std::string kernel =
      "_ZN5sgemm9pipelined15sgemm_pipelinedINS_10warptiling8WarpTileILi128ELi256ELi32ELi64ELi64ELi8ELi16EEELi3ELi1ELb1EEEvPKfS6_Pfllll";
  // The instruction lines only ("/*0a30*/  FFMA R1, ..."): the headers name the executable.
  auto instructions = [&](const std::string& id) {
    std::string out;
    std::istringstream sass(ladder_test::cuobjdump("-sass -fun " + kernel, id));
    for (std::string line; std::getline(sass, line);)
      if (line.find("/*") != std::string::npos && line.find("*/") != std::string::npos &&
          line.find("Function") == std::string::npos)
        out += line + "\n";
    return out;
  };
  if (!ladder_test::cuobjdump_installed()) GTEST_SKIP() << "cuobjdump is not installed";
  const std::string a = instructions(eleven), b = instructions(thirteen);
  ASSERT_NE(a.find("FFMA"), std::string::npos) << "no " << kernel << " in " << eleven;
  ASSERT_NE(b.find("FFMA"), std::string::npos) << "no " << kernel << " in " << thirteen;
  EXPECT_NE(a, b) << thirteen << " holds step 09's kernel exactly as " << eleven << " does";
#endif
}

}  // namespace

// ---- the TF32 bound (the tf32 series) ---------------------------------------------------------------
//
// A TF32 GEMM simulated on the CPU: inputs cut or rounded to TF32's 10 mantissa bits, products
// (exact in fp32) summed in fp32 k-tile by k-tile of 32. The bound of sgemm.cuh must accept it at
// every K, and reject the two bugs a tensor-core kernel makes: a k-tile left out, and k-columns of a
// tile paired wrongly (a mis-swizzle: A's column p meets B's row q).

namespace {

float tf32_cut(float x) {  // what the tensor core reads from an fp32 pattern: the low 13 bits ignored
  uint32_t b;
  std::memcpy(&b, &x, 4);
  b &= 0xFFFFE000u;
  std::memcpy(&x, &b, 4);
  return x;
}

float tf32_round(float x) {  // cvt.rna.tf32.f32: to nearest, ties away from zero (finite inputs)
  uint32_t b;
  std::memcpy(&b, &x, 4);
  b = (b + 0x1000u) & 0xFFFFE000u;
  std::memcpy(&x, &b, 4);
  return x;
}

struct Tf32Case {
  int64_t m, n, k;
  std::vector<float> a, b;
  std::vector<double> ref, mag;
  // Inputs uniform in [-1, 1), or (integers) the harness's --init integers: |x| <= 8, every product and
  // partial sum exact.
  Tf32Case(int64_t m_, int64_t n_, int64_t k_, uint64_t seed, bool integers = false)
      : m(m_), n(n_), k(k_), a(m_ * k_), b(k_ * n_) {
    if (integers) {
      sgemm::fill_integers(a.data(), m * k, seed, 1);
      sgemm::fill_integers(b.data(), k * n, seed, 2);
    } else {
      ladder::fill_uniform(a.data(), m * k, seed, 1, -1.f, 1.f);
      ladder::fill_uniform(b.data(), k * n, seed, 2, -1.f, 1.f);
    }
    ref.assign(m * n, 0.0);
    mag.assign(m * n, 0.0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t p = 0; p < k; ++p) {
          const double t = double(a[i * k + p]) * b[p * n + j];
          ref[i * n + j] += t;
          mag[i * n + j] += std::fabs(t);
        }
  }
  // skip_tile: the k-tile of 32 left out (-1: none); swap_in_tile: in every tile (or only in tile
  // `only_tile` when >= 0), columns 1 and 5 of A meet rows 5 and 1 of B; the products from
  // drop_from on are left out (the last product, the last partial k-tile).
  std::vector<float> run(float (*cvt)(float), int64_t skip_tile = -1, bool swap_in_tile = false,
                         int64_t only_tile = -1, int64_t drop_from = -1) const {
    std::vector<float> c(m * n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float acc = 0;
        for (int64_t t0 = 0; t0 < k; t0 += 32) {
          if (t0 / 32 == skip_tile) continue;
          const bool swap = swap_in_tile && (only_tile < 0 || t0 / 32 == only_tile) && t0 + 5 < k;
          float part = 0;
          for (int64_t p = t0; p < std::min(k, t0 + 32); ++p) {
            int64_t q = p;
            if (swap && p == t0 + 1) q = t0 + 5;
            if (swap && p == t0 + 5) q = t0 + 1;
            if (drop_from >= 0 && p >= drop_from) continue;
            part += cvt(a[i * k + p]) * cvt(b[q * n + j]);
          }
          acc += part;
        }
        c[i * n + j] = acc;
      }
    return c;
  }
  bool passes(const std::vector<float>& c, const ladder::ErrorBound& bound) const {
    return ladder::verify_bounded(c.data(), ref.data(), mag.data(), m * n, bound, {m, n}).ok;
  }
};

TEST(SgemmTf32Bound, AcceptsTf32ProductsCutOrRounded) {
  for (int64_t k : {1, 7, 33, 256, 1000, 4096}) {
    const Tf32Case c(16, 16, k, 40 + k);
    for (auto cvt : {tf32_cut, tf32_round}) {
      const std::vector<float> got = c.run(cvt);
      EXPECT_TRUE(c.passes(got, sgemm::bound_tf32_vs_exact(k))) << "k=" << k;
      EXPECT_TRUE(c.passes(got, sgemm::bound_tf32_vs_cublas(k))) << "k=" << k;
    }
  }
}

TEST(SgemmTf32Bound, RejectsAMissingKTile) {
  for (int64_t k : {64, 256, 4096}) {
    const Tf32Case c(16, 16, k, 50 + k);
    const std::vector<float> got = c.run(tf32_round, /*skip_tile=*/1);
    EXPECT_FALSE(c.passes(got, sgemm::bound_tf32_vs_exact(k))) << "k=" << k;
    EXPECT_FALSE(c.passes(got, sgemm::bound_tf32_vs_cublas(k))) << "k=" << k;
  }
}

TEST(SgemmTf32Bound, RejectsSwappedKColumnsWithinATile) {
  // One pair swapped in one tile (k = 256: the error (a_p - a_q)(b_q - b_p) is ~0.4 against an
  // allowed ~0.13), and the same swap in every tile, as a wrong swizzle does (k = 4096).
  {
    const Tf32Case c(16, 16, 256, 60);
    const std::vector<float> got = c.run(tf32_round, -1, true, /*only_tile=*/3);
    EXPECT_FALSE(c.passes(got, sgemm::bound_tf32_vs_exact(256)));
    EXPECT_FALSE(c.passes(got, sgemm::bound_tf32_vs_cublas(256)));
  }
  {
    const Tf32Case c(16, 16, 4096, 61);
    const std::vector<float> got = c.run(tf32_cut, -1, true);
    EXPECT_FALSE(c.passes(got, sgemm::bound_tf32_vs_exact(4096)));
    EXPECT_FALSE(c.passes(got, sgemm::bound_tf32_vs_cublas(4096)));
  }
}

// The magnitude bound's blind spot, and the exact mode that closes it. At K = 4096 a sum that lost
// its last three products moves by ~3/K of its magnitude, under the ~2 u_t the TF32 bound allows:
// the random-input check passes it (shown, so the gap is on record). With --init integers
// (|x| <= 8) every product and partial sum is exact, C is known exactly, and the equality check
// (exact_bound) catches a dropped last k-tile, or a single dropped product, at K = 4096 and 8191.
TEST(SgemmTf32Bound, RandomInputsAreBlindToAFewMissingTermsAtLargeK) {
  const Tf32Case c(16, 16, 4096, 71);
  const std::vector<float> got = c.run(tf32_cut, -1, false, -1, /*drop_from=*/4096 - 3);
  EXPECT_TRUE(c.passes(got, sgemm::bound_tf32_vs_exact(4096))) << "the magnitude bound now sees 3 missing terms";
}

TEST(SgemmTf32Bound, IntegerInputsCatchAMissingKTileAtAnyK) {
  for (int64_t k : {int64_t(4096), int64_t(8191)}) {
    const Tf32Case c(8, 8, k, 80 + k, /*integers=*/true);
    const int64_t last_tile = (k - 1) / 32 * 32;
    EXPECT_TRUE(c.passes(c.run(tf32_cut), sgemm::exact_bound(k))) << "k=" << k << ": every term kept";
    EXPECT_FALSE(c.passes(c.run(tf32_cut, last_tile / 32), sgemm::exact_bound(k))) << "k=" << k << ": last k-tile dropped";
    const std::vector<float> one_short = c.run(tf32_cut, -1, false, -1, /*drop_from=*/k - 1);
    EXPECT_FALSE(c.passes(one_short, sgemm::exact_bound(k))) << "k=" << k << ": last product dropped";
    // The same kernel against the TF32 magnitude bound: one missing product is not seen.
    EXPECT_TRUE(c.passes(one_short, sgemm::bound_tf32_vs_exact(k))) << "k=" << k;
  }
  std::vector<float> v(1000);  // the inputs: integers in [-8, 8], mostly not zero
  sgemm::fill_integers(v.data(), 1000, 5, 1);
  for (float x : v) ASSERT_TRUE(x == std::floor(x) && x >= -8 && x <= 8) << x;
  EXPECT_GT(std::count_if(v.begin(), v.end(), [](float x) { return x != 0; }), 800);
}

TEST(SgemmTf32Bound, RoundedInputsAreBoundWithHalfTheUnitRoundoff) {
  for (int64_t k : {int64_t(1), int64_t(256), int64_t(4096)}) {
    const ladder::ErrorBound cut = sgemm::bound_tf32_vs_exact(k, sgemm::Tf32Input::cut);
    const ladder::ErrorBound rounded = sgemm::bound_tf32_vs_exact(k, sgemm::Tf32Input::rounded);
    EXPECT_LT(rounded.c, cut.c) << "k=" << k;
    const Tf32Case c(16, 16, k, 90 + k);
    EXPECT_TRUE(c.passes(c.run(tf32_round), rounded)) << "k=" << k;
  }
}

TEST(SgemmTf32Bound, ConstantsFollowFromTheModel) {
  const double u = ladder::kFloatEps;
  // (1 + 2^-10)^2 (1 + gamma'_K) - 1 at K = 4096: 2^-9 + 2^-20 + 4096 2^-23 (1 + ...) ~= 2.44e-3.
  const double ut = 1.0 / 1024, ku = 4096.0 / (1 << 23), factor = (1 + ut) * (1 + ut) * (1 + ku / (1 - ku)) - 1;
  const ladder::ErrorBound ex = sgemm::bound_tf32_vs_exact(4096), bl = sgemm::bound_tf32_vs_cublas(4096);
  EXPECT_NEAR(ex.c * ex.terms * ex.eps, 1.01 * factor, 1e-12);
  EXPECT_NEAR(ex.c * ex.terms * ex.eps, 2.466e-3, 1e-5);
  EXPECT_EQ(ex.terms, 4096.0);
  EXPECT_EQ(ex.eps, u);
  for (int64_t k : {int64_t(1), int64_t(33), int64_t(4096), int64_t(1) << 20, int64_t(1) << 30}) {
    EXPECT_GT(sgemm::bound_tf32_vs_exact(k).c, sgemm::bound_vs_exact(k).c) << "k=" << k;
    EXPECT_GT(sgemm::bound_tf32_vs_cublas(k).c, sgemm::bound_tf32_vs_exact(k).c / 1.01) << "k=" << k;
  }
  EXPECT_GT(bl.c, ex.c / 1.01);
  EXPECT_LT(bl.c * bl.terms * bl.eps, 2.7e-3);
}

// wgmma and setmaxnreg exist only in sm_90a code: wherever the build's architecture list covers
// Hopper (90, 90a, native, all, all-major), tf32_03/04's own file must carry an sm_90a cubin and no
// plain sm_90 one, which would trap on an H100 (sgemm/CMakeLists.txt, sgemm_sm90a_step). Read from
// the built executables with cuobjdump --list-elf.
TEST(SgemmBuild, Tf32StepsCarrySm90aCode) {
  const std::string archs = LADDER_CUDA_ARCHITECTURES;
  bool hopper = archs == "native" || archs == "all" || archs == "all-major";
  std::string list = archs;
  std::replace(list.begin(), list.end(), ';', ' ');
  for (const std::string& a : ladder_test::split_args(list))
    hopper = hopper || a == "90" || a == "90a" || a.rfind("90-", 0) == 0 || a.rfind("90a-", 0) == 0;
  if (!hopper) GTEST_SKIP() << "this build (" << archs << ") has no Hopper code";
  if (!ladder_test::cuobjdump_installed()) GTEST_SKIP() << "cuobjdump is not installed";
  for (const char* name : {"tf32_03_wgmma_tma", "tf32_04_wgmma_specialized", "tf32_05_shape_classes"}) {
    const std::string id = std::string("sgemm/") + name;
    ASSERT_FALSE(ladder_test::step_path(id).empty()) << id << " is not built (sgemm/CMakeLists.txt always adds it)";
    const std::string elf = ladder_test::cuobjdump("--list-elf", id);
    ASSERT_FALSE(elf.empty()) << id << ": cuobjdump --list-elf printed nothing";
    // The step's file holds tf32_03's code too (tf32_04 and 05 include it) plus its own.
    EXPECT_NE(elf.find(std::string(name) + ".sm_90a.cubin"), std::string::npos) << id << ":\n" << elf;
    EXPECT_EQ(elf.find(std::string(name) + ".sm_90.cubin"), std::string::npos) << id << " has plain sm_90 code:\n" << elf;
  }
}

}  // namespace
