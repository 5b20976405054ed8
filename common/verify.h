// Verification against a reference. Two models:
//  * exact: integer sums, copies, transposes, and single IEEE operations (x + y) must compare equal
//    (==: bit for bit, except that -0 and +0 are equal);
//  * bounded: an element that is a sum or dot product of K terms may differ from the fp64 reference by
//      |got - ref| <= c * K * eps * sum|terms|
//    where sum|terms| (the "magnitude") is computed alongside the reference. Bounding by the terms and
//    not by the result keeps the test meaningful when the result cancels to near zero.
// NaN and Inf never pass (outputs are poisoned with NaN before each checked run, so an element that a
// kernel never wrote fails). The first few mismatches are printed with their indices.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace ladder {

struct VerifyReport {
  bool ok = true;
  int64_t checked = 0;
  int64_t mismatches = 0;
  double max_err = 0;                    // largest |got - ref|; infinite once an element is NaN/Inf
  std::vector<std::string> first_bad;    // up to kMaxReported lines, "[i,j] got ... want ..."
  static constexpr int kMaxReported = 5;

  void merge(const VerifyReport& other);  // combine two checks of one output (e.g. kernel, end-to-end)
  // "<what>: M of N elements wrong" and the first_bad lines; nothing when ok.
  void print(std::FILE* to, const std::string& what) const;
};

// Formats a flat index as "[i]" or "[row,col]" etc. for a row-major shape.
std::string format_index(int64_t flat, const std::vector<int64_t>& shape);

// Unit roundoff of float and double (half an ulp at 1.0).
constexpr double kFloatEps = 5.9604644775390625e-08;   // 2^-24
constexpr double kDoubleEps = 1.1102230246251565e-16;  // 2^-53

VerifyReport verify_exact(const float* got, const float* want, int64_t n,
                          const std::vector<int64_t>& shape);
VerifyReport verify_exact(const int32_t* got, const int32_t* want, int64_t n,
                          const std::vector<int64_t>& shape);
VerifyReport verify_exact(const int64_t* got, const int64_t* want, int64_t n,
                          const std::vector<int64_t>& shape);

struct ErrorBound {
  double terms;      // K: how many terms each element sums
  double eps;        // unit roundoff of the arithmetic under test
  double c = 2.0;    // slack for the order of summation (pairwise, blocked, FMA) — see each caller
};

// Bounded check of float or double results against an fp64 reference with per-element magnitudes.
VerifyReport verify_bounded(const float* got, const double* ref, const double* magnitude, int64_t n,
                            const ErrorBound& bound, const std::vector<int64_t>& shape);
VerifyReport verify_bounded(const double* got, const double* ref, const double* magnitude,
                            int64_t n, const ErrorBound& bound, const std::vector<int64_t>& shape);

}  // namespace ladder
