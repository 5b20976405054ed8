// vector_add's CPU reference against independent computations.
#include "common/random.h"
#include "vector_add/vector_add.cuh"

#include <gtest/gtest.h>

#include <vector>

namespace {

TEST(VectorAddReference, ClosedFormOnIntegers) {
  const int64_t n = 1000003;
  std::vector<float> x(n), y(n), r(n, -1.f);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = static_cast<float>(2 * i);
  }
  vector_add::reference_add(x.data(), y.data(), r.data(), n);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(r[i], static_cast<float>(3 * i)) << i;
}

TEST(VectorAddReference, MatchesCorrectlyRoundedSumOfRandomInputs) {
  // Inputs are multiples of 2^-23 in [-1, 1): their sum is exact in double, so rounding it to float
  // once is the correctly rounded float sum, computed independently of the reference's code.
  for (int64_t n : {1, 7, 33, 1000, 65537}) {
    std::vector<float> x(n), y(n), r(n);
    ladder::fill_uniform(x.data(), n, 99, 1, -1.f, 1.f);
    ladder::fill_uniform(y.data(), n, 99, 2, -1.f, 1.f);
    vector_add::reference_add(x.data(), y.data(), r.data(), n);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(r[i], static_cast<float>(static_cast<double>(x[i]) + static_cast<double>(y[i])));
  }
}

TEST(VectorAddProblem, BytesAreTwoReadsAndOneWrite) {
  EXPECT_DOUBLE_EQ(vector_add::min_bytes(100000000), 1.2e9);
}

}  // namespace
