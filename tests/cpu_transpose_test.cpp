// transpose's CPU reference against a brute-force loop, on awkward shapes (1 x n, n x 1, sizes
// that are not multiples of the reference's 64 x 64 blocks), and the shared grid helper.
#include "common/random.h"
#include "transpose/transpose.cuh"

#include <gtest/gtest.h>

#include <cstring>
#include <utility>
#include <vector>

namespace {

TEST(TransposeReference, MatchesBruteForceOnAwkwardShapes) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {
      {1, 1}, {1, 7}, {7, 1}, {1, 1000}, {1000, 1}, {33, 65}, {64, 64}, {65, 63}, {127, 1}, {1, 129},
      {200, 333}, {1025, 97}};
  for (const auto& [rows, cols] : shapes) {
    const int64_t n = rows * cols;
    std::vector<float> in(n), out(n, -7.f), twice(n, -7.f);
    ladder::fill_uniform(in.data(), n, 2024, 1, -1.f, 1.f);
    transpose::reference_transpose(in.data(), out.data(), rows, cols);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        ASSERT_EQ(std::memcmp(&out[c * rows + r], &in[r * cols + c], sizeof(float)), 0)
            << rows << " x " << cols << " at [" << r << "][" << c << "]";
    // Transposing the cols x rows result gives the input back.
    transpose::reference_transpose(out.data(), twice.data(), cols, rows);
    ASSERT_EQ(std::memcmp(twice.data(), in.data(), n * sizeof(float)), 0) << rows << " x " << cols;
  }
}

TEST(TransposeProblem, BytesAreOneReadAndOneWritePerElement) {
  EXPECT_DOUBLE_EQ(transpose::min_bytes(8192, 8192), 8.0 * 8192 * 8192);
  EXPECT_DOUBLE_EQ(transpose::min_bytes(1, 1000), 8000.0);
}

TEST(TransposeGrid, TileColumnsOnXUnlessTooManyTileRows) {
  transpose::TileGrid g = transpose::tile_grid(8192, 8192, 32, 32);
  EXPECT_EQ(g.grid.x, 256u);
  EXPECT_EQ(g.grid.y, 256u);
  EXPECT_FALSE(g.rows_on_x);

  g = transpose::tile_grid(33, 65, 16, 16);  // partial tiles round up
  EXPECT_EQ(g.grid.x, 5u);
  EXPECT_EQ(g.grid.y, 3u);

  // 10^7 x 1: 312,500 tile rows exceed gridDim.y's 65,535, so tile rows go on x.
  g = transpose::tile_grid(10000000, 1, 32, 32);
  EXPECT_TRUE(g.rows_on_x);
  EXPECT_EQ(g.grid.x, 312500u);
  EXPECT_EQ(g.grid.y, 1u);

  EXPECT_THROW(transpose::tile_grid(int64_t(1) << 40, int64_t(1) << 40, 32, 32), ladder::UsageError);
}

}  // namespace
