// separable_conv's CPU reference against a direct 2-D convolution with the outer-product kernel
// (col_taps[j] * row_taps[i]) in long double, borders included, on shapes smaller and larger than
// the kernel; the rounding bound and the grid helper the steps share; and the taps every step must
// refuse (even, or more than kMaxTaps) with exit 2 — checked by running each registered step, which
// needs no GPU because the flags are judged before the device is.
#include "common/random.h"
#include "separable_conv/separable_conv.cuh"
#include "tests/step_runner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

struct Shape {
  int64_t width, height;
  int taps;
};

TEST(SeparableConvReference, MatchesDirect2DConvolutionWithTheOuterProductKernel) {
  const std::vector<Shape> shapes = {{1, 1, 1},   {1, 1, 7},   {1, 7, 3},   {7, 1, 5},   {5, 3, 7},
                                     {3, 5, 9},   {33, 17, 9}, {40, 31, 17}, {64, 50, 63}, {70, 9, 127},
                                     {2, 130, 31}};
  for (const Shape& s : shapes) {
    const int64_t n = s.width * s.height;
    const int k = s.taps, r = k / 2;
    std::vector<float> in(n), row(k), col(k);
    ladder::fill_uniform(in.data(), n, 7, 1, -1.f, 1.f);
    ladder::fill_uniform(row.data(), k, 7, 2, -1.f, 1.f);
    ladder::fill_uniform(col.data(), k, 7, 3, -1.f, 1.f);
    std::vector<double> ref(n, -7.0), mag(n, -7.0);
    separable_conv::reference_convolution(in.data(), row.data(), col.data(), s.width, s.height, k,
                                          ref.data(), mag.data());
    for (int64_t y = 0; y < s.height; ++y)
      for (int64_t x = 0; x < s.width; ++x) {
        // out[y][x] = sum_{j,i} (col[j] row[i]) in[y + j - R][x + i - R], zeros outside the image.
        long double want = 0, want_mag = 0;
        for (int j = 0; j < k; ++j)
          for (int i = 0; i < k; ++i) {
            const int64_t yy = y + j - r, xx = x + i - r;
            if (yy < 0 || yy >= s.height || xx < 0 || xx >= s.width) continue;
            const long double w = static_cast<long double>(col[j]) * row[i];
            want += w * in[yy * s.width + xx];
            want_mag += std::fabs(w * in[yy * s.width + xx]);
          }
        // The fp64 reference rounds each of its two K-term passes: within 2.001 K 2^-53 of the
        // magnitude (separable_conv.cuh), plus slack for long double's own rounding.
        const double allowed = 3.0 * k * ladder::kDoubleEps * static_cast<double>(want_mag) + 1e-300;
        const int64_t at = y * s.width + x;
        ASSERT_LE(std::fabs(ref[at] - static_cast<double>(want)), allowed)
            << s.width << " x " << s.height << ", K = " << k << " at [" << y << "," << x << "]";
        ASSERT_LE(std::fabs(mag[at] - static_cast<double>(want_mag)), allowed)
            << "magnitude, " << s.width << " x " << s.height << ", K = " << k << " at [" << y << "," << x << "]";
      }
  }
}

TEST(SeparableConvReference, DeltaTapsCopyTheImage) {
  // Centre taps 1, the rest 0: out = in exactly, at every border.
  const int64_t w = 13, h = 6;
  const int k = 5;
  std::vector<float> in(w * h), taps(k, 0.f);
  taps[k / 2] = 1.f;
  ladder::fill_uniform(in.data(), w * h, 11, 1, -1.f, 1.f);
  std::vector<double> ref(w * h), mag(w * h);
  separable_conv::reference_convolution(in.data(), taps.data(), taps.data(), w, h, k, ref.data(), mag.data());
  for (int64_t i = 0; i < w * h; ++i) {
    ASSERT_EQ(ref[i], static_cast<double>(in[i])) << i;
    ASSERT_EQ(mag[i], std::fabs(static_cast<double>(in[i]))) << i;
  }
}

TEST(SeparableConvReference, ShiftTapsMoveTheImageAndPadWithZeros) {
  // Row taps with a single 1 at i = 0 read in[y][x - R]; column taps with a 1 at j = K - 1 read
  // tmp[y + R][x]. So out[y][x] = in[y + R][x - R], 0 where that pixel is outside the image.
  const int64_t w = 9, h = 7;
  const int k = 5, r = 2;
  std::vector<float> in(w * h), row(k, 0.f), col(k, 0.f);
  row[0] = 1.f;
  col[k - 1] = 1.f;
  ladder::fill_uniform(in.data(), w * h, 13, 1, 0.5f, 1.f);
  std::vector<double> ref(w * h), mag(w * h);
  separable_conv::reference_convolution(in.data(), row.data(), col.data(), w, h, k, ref.data(), mag.data());
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      const bool inside = y + r < h && x - r >= 0;
      const double want = inside ? in[(y + r) * w + x - r] : 0.0;
      ASSERT_EQ(ref[y * w + x], want) << "[" << y << "," << x << "]";
    }
}

TEST(SeparableConvProblem, BoundBytesAndGrid) {
  const ladder::ErrorBound b = separable_conv::error_bound(17);
  EXPECT_EQ(b.terms, 17.0);
  EXPECT_EQ(b.eps, ladder::kFloatEps);
  EXPECT_GE(b.c, 2.0);   // two passes of K terms: (2g + g^2) / (K u) > 2
  EXPECT_LT(b.c, 2.01);  // and no looser than that argument needs
  EXPECT_DOUBLE_EQ(separable_conv::min_bytes(8192, 8192), 8.0 * 8192 * 8192);

  dim3 g = separable_conv::tile_grid(8192, 8192, 128, 64);
  EXPECT_EQ(g.x, 64u);
  EXPECT_EQ(g.y, 128u);
  g = separable_conv::tile_grid(133, 67, 28, 28);  // partial tiles round up
  EXPECT_EQ(g.x, 5u);
  EXPECT_EQ(g.y, 3u);
  g = separable_conv::tile_grid(1, 10000000, 32, 32);  // 312,500 tile rows: the kernels loop over them
  EXPECT_EQ(g.x, 1u);
  EXPECT_EQ(g.y, 65535u);
}

// Every step: an even K or one past kMaxTaps is a usage error (exit 2, one line naming --taps);
// the largest K is accepted (exit 0 where there is a GPU or for the CPU step, 77 otherwise).
class SeparableConvTaps : public testing::TestWithParam<std::string> {};

TEST_P(SeparableConvTaps, EvenOrTooManyTapsExitTwo) {
  const std::string& id = GetParam();
  const std::string too_many = std::to_string(separable_conv::kMaxTaps + 2);
  for (const std::string taps : {"2", "16", "64", "1000", too_many.c_str()}) {
    auto r = ladder_test::run_step(id, {"--width", "33", "--height", "17", "--taps", taps, "--no-ceiling"});
    EXPECT_EQ(r.exit_code, 2) << id << " --taps " << taps << "\n" << r.output;
    EXPECT_EQ(r.output.rfind("error: --taps", 0), 0u) << r.output;
  }
  auto r = ladder_test::run_step(id, {"--width", "5", "--height", "3", "--taps",
                                      std::to_string(separable_conv::kMaxTaps), "--no-ceiling", "--reps",
                                      "1", "--warmup", "0", "--json"});
  if (!ladder_test::gpu_available() && id != "separable_conv/00_cpu") {
    EXPECT_EQ(r.exit_code, 77) << id << "\n" << r.output;
  } else {  // verified, or refused where the GPU (or its profile) lacks what the step declared
    const ladder_test::Verdict v = ladder_test::judge(id, r);
    EXPECT_NE(v.kind, ladder_test::Verdict::failed) << v.reason;
  }
}

INSTANTIATE_TEST_SUITE_P(AllSteps, SeparableConvTaps,
                         testing::ValuesIn(ladder_test::steps_of("separable_conv")),
                         [](const testing::TestParamInfo<std::string>& p) {
                           return ladder_test::param_name(p.param, "taps");
                         });

}  // namespace
