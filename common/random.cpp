#include "common/random.h"

namespace ladder {

void fill_uniform(float* out, int64_t n, uint64_t seed, uint64_t stream, float lo, float hi) {
  const float scale = (hi - lo) / 16777216.0f;  // 2^24
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    out[i] = lo + static_cast<float>(random_bits(seed, stream, i) >> 40) * scale;
}

void fill_uniform(double* out, int64_t n, uint64_t seed, uint64_t stream, double lo, double hi) {
  const double scale = (hi - lo) / 9007199254740992.0;  // 2^53
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    out[i] = lo + static_cast<double>(random_bits(seed, stream, i) >> 11) * scale;
}

void fill_uniform_int(int32_t* out, int64_t n, uint64_t seed, uint64_t stream, int32_t lo,
                      int32_t hi) {
  const uint64_t span = static_cast<uint64_t>(static_cast<int64_t>(hi) - lo) + 1;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    out[i] = static_cast<int32_t>(lo + static_cast<int64_t>(random_bits(seed, stream, i) % span));
}

}  // namespace ladder
