// avg_matvec's CPU side: the reference against independent computations (the post's 1-or-2 data,
// whose answers are exact integers over M; a long double brute force at small awkward sizes), the
// bound (tight enough that one element dropped from one mean fails it), the inputs, the L limits of
// steps 01-04, the bytes, and the CPU step itself, which runs on any machine.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "avg_matvec/avg_matvec.cuh"
#include "common/verify.h"
#include "tests/step_runner.h"

namespace {

using avg_matvec::BlockOfL;
using avg_matvec::Init;
using avg_matvec::Sizes;

struct Data {
  std::vector<double> input, W, out, mag;
};

Data make(const Sizes& s, Init init, uint64_t seed) {
  Data d;
  d.input.resize(s.N * s.L * s.M);
  d.W.resize(s.L * s.L);
  d.out.assign(s.L * s.N, -7.0);
  d.mag.assign(s.L * s.N, -7.0);
  avg_matvec::make_inputs(d.input.data(), d.W.data(), s, init, seed);
  avg_matvec::reference(d.input.data(), d.W.data(), s, d.out.data(), d.mag.data());
  return d;
}

TEST(AvgMatvecReference, PostsDataIsExact) {
  // M a power of two: out[i][k] = (sum_j W[i][j] * S[k][j]) / M exactly, S the integer row sums.
  for (const Sizes& s :
       std::vector<Sizes>{{1, 1, 1}, {3, 4, 5}, {64, 32, 7}, {17, 128, 3}, {5, 1, 9}}) {
    ASSERT_TRUE(avg_matvec::posts_are_exact(s));
    const Data d = make(s, Init::posts, 99);
    std::vector<int64_t> S(s.N * s.L, 0);
    for (int64_t t = 0; t < s.N * s.L * s.M; ++t) {
      ASSERT_TRUE(d.input[t] == 1.0 || d.input[t] == 2.0) << t;
      S[t / s.M] += static_cast<int64_t>(d.input[t]);
    }
    for (int64_t i = 0; i < s.L; ++i)
      for (int64_t k = 0; k < s.N; ++k) {
        int64_t dot = 0;
        for (int64_t j = 0; j < s.L; ++j)
          dot += static_cast<int64_t>(d.W[i * s.L + j]) * S[k * s.L + j];
        const double want = static_cast<double>(dot) / s.M;
        ASSERT_EQ(d.out[i * s.N + k], want)
            << s.L << "x" << s.M << "x" << s.N << " [" << i << "][" << k << "]";
        ASSERT_EQ(d.mag[i * s.N + k], want);  // all terms positive: the magnitude is the value
      }
    const ladder::ErrorBound b = avg_matvec::error_bound(s, Init::posts);
    EXPECT_EQ(b.eps, 0.0);  // checked exactly
  }
}

TEST(AvgMatvecReference, MatchesLongDoubleBruteForce) {
  for (const Sizes& s : std::vector<Sizes>{
           {1, 1, 1}, {2, 3, 1}, {7, 5, 3}, {33, 17, 2}, {64, 33, 7}, {5, 1000, 2}, {100, 1, 4}}) {
    const Data d = make(s, Init::random, 7);
    for (int64_t i = 0; i < s.L; ++i)
      for (int64_t k = 0; k < s.N; ++k) {
        long double acc = 0, mag = 0;
        for (int64_t j = 0; j < s.L; ++j) {
          long double sum = 0, sum_abs = 0;
          for (int64_t t = 0; t < s.M; ++t) {
            const double x = d.input[(k * s.L + j) * s.M + t];
            sum += x;
            sum_abs += std::fabs(x);
          }
          acc += d.W[i * s.L + j] * (sum / s.M);
          mag += std::fabs(d.W[i * s.L + j]) * (sum_abs / s.M);
        }
        const int64_t e = i * s.N + k;
        // One double computation: within gamma_{L+M+1} mag <= (L + M + 2) u mag of the exact value.
        EXPECT_LE(std::fabs(d.out[e] - acc),
                  (s.L + s.M + 2) * ladder::kDoubleEps * mag * (1 + 1.0L / 1024))
            << s.L << "x" << s.M << "x" << s.N << " [" << i << "][" << k << "]";
        EXPECT_NEAR(d.mag[e], static_cast<double>(mag), 1e-12 * static_cast<double>(mag));
        EXPECT_GT(d.mag[e], 0.0);
      }
  }
}

TEST(AvgMatvecBound, OneDroppedElementFails) {
  // What a kernel that skips the last element of one row would produce: the bound must reject it.
  const Sizes s{64, 33, 7};
  const Data d = make(s, Init::random, 11);
  Data bad = d;
  bad.input[(3 * s.L + 5) * s.M + s.M - 1] = 0.0;  // batch 3, row 5, last element
  avg_matvec::reference(bad.input.data(), bad.W.data(), s, bad.out.data(), bad.mag.data());
  const ladder::ErrorBound b = avg_matvec::error_bound(s, Init::random);
  const auto report =
      ladder::verify_bounded(bad.out.data(), d.out.data(), d.mag.data(), s.L * s.N, b, {s.L, s.N});
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.mismatches, s.L);  // column 3 of out, every element
  // And the untouched result passes its own check; a NaN does not.
  EXPECT_TRUE(
      ladder::verify_bounded(d.out.data(), d.out.data(), d.mag.data(), s.L * s.N, b, {s.L, s.N})
          .ok);
  std::vector<double> poisoned = d.out;
  std::memset(&poisoned[17], 0xFF, sizeof(double));
  EXPECT_FALSE(
      ladder::verify_bounded(poisoned.data(), d.out.data(), d.mag.data(), s.L * s.N, b, {s.L, s.N})
          .ok);
}

TEST(AvgMatvecBound, TermsAndExactness) {
  const ladder::ErrorBound b = avg_matvec::error_bound({512, 512, 1024}, Init::random);
  EXPECT_EQ(b.terms, 512 + 512 + 2);
  EXPECT_EQ(b.c, 2.0);
  EXPECT_EQ(b.eps, ladder::kDoubleEps);
  EXPECT_TRUE(avg_matvec::posts_are_exact({512, 512, 1024}));
  EXPECT_FALSE(avg_matvec::posts_are_exact({500, 700, 999}));  // 1/700 is not a double
  EXPECT_GT(avg_matvec::error_bound({500, 700, 999}, Init::posts).eps, 0.0);
  EXPECT_TRUE(avg_matvec::posts_are_exact({1, 1, 1}));
  EXPECT_FALSE(avg_matvec::posts_are_exact({int64_t(1) << 30, int64_t(1) << 30, 1}));  // past 2^53
}

TEST(AvgMatvecInputs, SeededAndOfTheRightKind) {
  const Sizes s{9, 31, 4};
  const Data a = make(s, Init::random, 5), b = make(s, Init::random, 5),
             c = make(s, Init::random, 6);
  EXPECT_EQ(a.input, b.input);
  EXPECT_EQ(a.W, b.W);
  EXPECT_NE(a.input, c.input);
  int64_t negative = 0;
  for (double x : a.input) {
    ASSERT_TRUE(x >= -1.0 && x < 1.0);
    negative += x < 0;
  }
  EXPECT_GT(negative, 0);
  EXPECT_LT(negative, static_cast<int64_t>(a.input.size()));
  EXPECT_NE(a.input[0], a.W[0]);  // independent streams
  const Data p = make(s, Init::posts, 5);
  int64_t twos = 0;
  for (double x : p.W) {
    ASSERT_TRUE(x == 1.0 || x == 2.0);
    twos += x == 2.0;
  }
  EXPECT_GT(twos, 0);
  EXPECT_LT(twos, s.L * s.L);
}

TEST(AvgMatvecLimits, OneBlockOfLThreads) {
  for (int64_t L : {1, 2, 32, 64, 512, 1024})
    EXPECT_TRUE(avg_matvec::accepts(BlockOfL::power_of_two, L)) << L;
  for (int64_t L : {3, 96, 500, 1000, 2048})
    EXPECT_FALSE(avg_matvec::accepts(BlockOfL::power_of_two, L)) << L;
  for (int64_t L : {32, 96, 512, 992, 1024})
    EXPECT_TRUE(avg_matvec::accepts(BlockOfL::whole_warps, L)) << L;
  for (int64_t L : {1, 16, 500, 1000, 1056})
    EXPECT_FALSE(avg_matvec::accepts(BlockOfL::whole_warps, L)) << L;
  for (int64_t L : {1, 1000, 1 << 20}) EXPECT_TRUE(avg_matvec::accepts(BlockOfL::any, L)) << L;
  EXPECT_THROW(avg_matvec::require_supported(BlockOfL::whole_warps, "03_warp_average", 1000),
               ladder::UsageError);
  EXPECT_NO_THROW(avg_matvec::require_supported(BlockOfL::power_of_two, "01_one_block", 512));
}

TEST(AvgMatvecProblem, Bytes) {
  const Sizes d{avg_matvec::kDefaultL, avg_matvec::kDefaultM, avg_matvec::kDefaultN};
  EXPECT_DOUBLE_EQ(avg_matvec::input_bytes(d), 8.0 * 512 * 512 * 1024);  // 2.15 GB
  EXPECT_DOUBLE_EQ(avg_matvec::min_bytes(d), 8.0 * (512.0 * 512 * 1024 + 512 * 512 + 512 * 1024));
}

// The CPU step needs no GPU: it runs and verifies here, at sizes that are not multiples of
// anything.
TEST(AvgMatvecCpuStep, VerifiesAtAwkwardSizes) {
  for (const char* size : {"--L 1 --M 1 --N 1", "--L 7 --M 5 --N 3", "--L 33 --M 17 --N 2"}) {
    std::vector<std::string> args = ladder_test::split_args(size);
    args.insert(args.end(), {"--json", "--no-ceiling", "--reps", "1", "--warmup", "0", "--seed",
                             std::to_string(ladder_test::fresh_seed())});
    auto r = ladder_test::run_step("avg_matvec/00_cpu", args);
    EXPECT_TRUE(ladder_test::verified_run(r)) << size;
  }
  std::vector<std::string> posts = {"--L",    "16",    "--M",    "64",           "--N",    "3",
                                    "--init", "posts", "--json", "--no-ceiling", "--reps", "1"};
  auto r = ladder_test::run_step("avg_matvec/00_cpu", posts);
  ASSERT_TRUE(ladder_test::verified_run(r));
  EXPECT_EQ(ladder_test::json_number(r.json, "max_err"), 0.0) << r.json;
}

}  // namespace
