// Seeded inputs. Every element is a pure function of (seed, stream, index) — a counter-based hash
// (SplitMix64's finalizer) — so fills are parallel (OpenMP), reproducible whatever the thread count,
// and two arrays filled with different `stream` numbers are independent.
#pragma once

#include <cstdint>

namespace ladder {

inline uint64_t mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline uint64_t random_bits(uint64_t seed, uint64_t stream, uint64_t index) {
  return mix64(mix64(seed ^ mix64(stream)) + index);
}

// Uniform in [lo, hi): lo + k (hi - lo) / 2^b for a random integer k < 2^b, with b = 24 for float
// (k exact in a float's 24-bit significand) and b = 53 for double, computed in the output's type
// (exact, never hi, for ranges such as [-1, 1)).
void fill_uniform(float* out, int64_t n, uint64_t seed, uint64_t stream, float lo, float hi);
void fill_uniform(double* out, int64_t n, uint64_t seed, uint64_t stream, double lo, double hi);
// Uniform integers in [lo, hi] inclusive (random_bits modulo the span: bias below 2^-32).
void fill_uniform_int(int32_t* out, int64_t n, uint64_t seed, uint64_t stream, int32_t lo,
                      int32_t hi);

}  // namespace ladder
