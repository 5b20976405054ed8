// reduction's CPU reference against closed forms and an independent serial loop, and the bounds
// the folder relies on (int32 partials, bytes moved).
#include "common/random.h"
#include "reduction/reduction.cuh"

#include <gtest/gtest.h>

#include <climits>
#include <vector>

namespace {

TEST(ReductionReference, AllOnesSumToN) {
  for (int64_t n : {1, 7, 33, 1000, 1000003}) {
    std::vector<int32_t> x(n, 1);
    EXPECT_EQ(reduction::reference_sum(x.data(), n), n);
  }
}

TEST(ReductionReference, ArithmeticSeries) {
  // 0 + 1 + ... + (n-1) = n(n-1)/2, about 5e11 here: past int32 and past uint32.
  const int64_t n = 1000003;
  std::vector<int32_t> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<int32_t>(i);
  EXPECT_EQ(reduction::reference_sum(x.data(), n), n * (n - 1) / 2);
}

TEST(ReductionReference, MaxValuesPastThe32BitRange) {
  // 255 * n overflows int32 from n = 8,421,505 and uint32 from n = 16,843,010.
  for (int64_t n : {int64_t(8421505), int64_t(1) << 24 | 5}) {
    std::vector<int32_t> x(n, reduction::kMaxValue);
    const int64_t want = int64_t(reduction::kMaxValue) * n;
    ASSERT_GT(want, int64_t(INT32_MAX));
    EXPECT_EQ(reduction::reference_sum(x.data(), n), want) << n;
  }
}

TEST(ReductionReference, MatchesSerialLoopOnRandomInputs) {
  for (int64_t n : {1, 7, 33, 1000, 65537}) {
    std::vector<int32_t> x(n);
    ladder::fill_uniform_int(x.data(), n, 1234, 1, 0, reduction::kMaxValue);
    long double want = 0;  // a different accumulator type, a serial order
    for (int64_t i = 0; i < n; ++i) want += x[i];
    EXPECT_EQ(reduction::reference_sum(x.data(), n), static_cast<int64_t>(want)) << n;
  }
}

TEST(ReductionProblem, Int32PartialBound) {
  constexpr int64_t most = INT32_MAX / reduction::kMaxValue;
  static_assert(reduction::fits_int32_partial(most), "the largest safe count fits");
  static_assert(!reduction::fits_int32_partial(most + 1), "one more could overflow");
  EXPECT_LE(most * reduction::kMaxValue, int64_t(INT32_MAX));
  EXPECT_GT((most + 1) * reduction::kMaxValue, int64_t(INT32_MAX));
  EXPECT_TRUE(reduction::fits_int32_partial(512 * 8));  // steps 05-07: 8 data blocks of 512
}

TEST(ReductionProblem, BytesAreOneReadPerValue) {
  EXPECT_DOUBLE_EQ(reduction::min_bytes(reduction::kDefaultN), 1073741824.0);
  EXPECT_EQ(reduction::kDefaultN, int64_t(1) << 28);
}

}  // namespace
