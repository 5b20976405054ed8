#include "common/verify.h"

#include <cmath>
#include <sstream>
#include <type_traits>

namespace ladder {

void VerifyReport::merge(const VerifyReport& o) {
  ok = ok && o.ok;
  checked += o.checked;
  mismatches += o.mismatches;
  if (o.max_err > max_err) max_err = o.max_err;
  for (const auto& s : o.first_bad)
    if (static_cast<int>(first_bad.size()) < kMaxReported) first_bad.push_back(s);
}

void VerifyReport::print(std::FILE* to, const std::string& what) const {
  if (ok) return;
  std::fprintf(to, "%s: %lld of %lld elements wrong\n", what.c_str(),
               static_cast<long long>(mismatches), static_cast<long long>(checked));
  for (const auto& s : first_bad) std::fprintf(to, "  %s\n", s.c_str());
}

std::string format_index(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    int64_t extent = shape[d] > 0 ? shape[d] : 1;
    idx[d] = flat % extent;
    flat /= extent;
  }
  if (shape.empty()) idx.push_back(flat);
  std::ostringstream s;
  s << "[";
  for (size_t d = 0; d < idx.size(); ++d) s << (d ? "," : "") << idx[d];
  s << "]";
  return s.str();
}

namespace {

template <typename T>
void note_mismatch(VerifyReport& r, int64_t i, const std::vector<int64_t>& shape, T got, T want,
                   double bound) {
  r.ok = false;
  ++r.mismatches;
  if (static_cast<int>(r.first_bad.size()) >= VerifyReport::kMaxReported) return;
  std::ostringstream s;
  s.precision(9);
  s << format_index(i, shape) << " got " << got << " want " << want;
  if (bound >= 0) s << " (allowed error " << bound << ")";
  r.first_bad.push_back(s.str());
}

// max_err grows with every mismatch; a non-finite result makes it infinite (JSON null).
void note_error(VerifyReport& r, double got, double want) {
  const double d = std::isfinite(got) ? std::fabs(got - want) : INFINITY;
  if (!(d <= r.max_err)) r.max_err = d;
}

template <typename T>
VerifyReport exact_impl(const T* got, const T* want, int64_t n, const std::vector<int64_t>& shape) {
  VerifyReport r;
  r.checked = n;
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      // Bitwise-equal values pass; NaN != NaN, so a poisoned element fails here. A failed element
      // still reports its error: |got - want|, or infinity when got is NaN or infinite.
      if (!(got[i] == want[i]) || !std::isfinite(static_cast<double>(got[i]))) {
        note_mismatch(r, i, shape, got[i], want[i], -1);
        note_error(r, static_cast<double>(got[i]), static_cast<double>(want[i]));
        continue;
      }
    } else {
      if (got[i] != want[i]) {
        note_mismatch(r, i, shape, got[i], want[i], -1);
        double d = std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i]));
        if (d > r.max_err) r.max_err = d;
      }
    }
  }
  return r;
}

template <typename T>
VerifyReport bounded_impl(const T* got, const double* ref, const double* magnitude, int64_t n,
                          const ErrorBound& b, const std::vector<int64_t>& shape) {
  VerifyReport r;
  r.checked = n;
  for (int64_t i = 0; i < n; ++i) {
    double g = static_cast<double>(got[i]);
    double allowed = b.c * b.terms * b.eps * magnitude[i];
    if (!std::isfinite(g)) {
      note_mismatch(r, i, shape, g, ref[i], allowed);
      note_error(r, g, ref[i]);
      continue;
    }
    double err = std::fabs(g - ref[i]);
    if (err > r.max_err) r.max_err = err;
    if (!(err <= allowed)) note_mismatch(r, i, shape, g, ref[i], allowed);
  }
  return r;
}

}  // namespace

VerifyReport verify_exact(const float* got, const float* want, int64_t n,
                          const std::vector<int64_t>& shape) {
  return exact_impl(got, want, n, shape);
}
VerifyReport verify_exact(const int32_t* got, const int32_t* want, int64_t n,
                          const std::vector<int64_t>& shape) {
  return exact_impl(got, want, n, shape);
}
VerifyReport verify_exact(const int64_t* got, const int64_t* want, int64_t n,
                          const std::vector<int64_t>& shape) {
  return exact_impl(got, want, n, shape);
}
VerifyReport verify_bounded(const float* got, const double* ref, const double* magnitude, int64_t n,
                            const ErrorBound& bound, const std::vector<int64_t>& shape) {
  return bounded_impl(got, ref, magnitude, n, bound, shape);
}
VerifyReport verify_bounded(const double* got, const double* ref, const double* magnitude,
                            int64_t n, const ErrorBound& bound, const std::vector<int64_t>& shape) {
  return bounded_impl(got, ref, magnitude, n, bound, shape);
}

}  // namespace ladder
