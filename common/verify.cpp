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

// One element's verdict: whether it fails, its error (infinite when the result is NaN or Inf), and
// for the report line the values and the allowed error (negative: exact check).
struct Element {
  bool bad;
  double err, got, want, allowed;
};

// Scans n elements in parallel (OpenMP) for the count and the largest error, then, only if some
// failed, walks them again in order to report the first few with their indices. A passing check of
// 2^31 elements costs one parallel pass.
template <typename ElementFn>
VerifyReport scan(int64_t n, const std::vector<int64_t>& shape, ElementFn element) {
  VerifyReport r;
  r.checked = n;
  int64_t bad = 0;
  double max_err = 0;
#pragma omp parallel for reduction(+ : bad) reduction(max : max_err) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const Element e = element(i);
    bad += e.bad;
    if (!(e.err <= max_err)) max_err = e.err;  // NaN-safe: a NaN error would not replace it
  }
  r.mismatches = bad;
  r.max_err = max_err;
  r.ok = bad == 0;
  for (int64_t i = 0; i < n && static_cast<int>(r.first_bad.size()) < VerifyReport::kMaxReported && bad; ++i) {
    const Element e = element(i);
    if (!e.bad) continue;
    std::ostringstream line;
    line.precision(9);
    line << format_index(i, shape) << " got " << e.got << " want " << e.want;
    if (e.allowed >= 0) line << " (allowed error " << e.allowed << ")";
    r.first_bad.push_back(line.str());
  }
  return r;
}

// |got - want|, or infinity when got is NaN or infinite.
double error_of(double got, double want) { return std::isfinite(got) ? std::fabs(got - want) : INFINITY; }

template <typename T>
VerifyReport exact_impl(const T* got, const T* want, int64_t n, const std::vector<int64_t>& shape) {
  return scan(n, shape, [&](int64_t i) {
    const double g = static_cast<double>(got[i]), w = static_cast<double>(want[i]);
    bool bad;
    if constexpr (std::is_floating_point_v<T>) {
      bad = !(got[i] == want[i]) || !std::isfinite(g);  // NaN != NaN: a poisoned element fails
    } else {
      bad = got[i] != want[i];
    }
    return Element{bad, bad ? error_of(g, w) : 0.0, g, w, -1};
  });
}

template <typename T>
VerifyReport bounded_impl(const T* got, const double* ref, const double* magnitude, int64_t n,
                          const ErrorBound& b, const std::vector<int64_t>& shape) {
  return scan(n, shape, [&](int64_t i) {
    const double g = static_cast<double>(got[i]);
    const double allowed = b.c * b.terms * b.eps * magnitude[i];
    const double err = error_of(g, ref[i]);
    return Element{!(err <= allowed), err, g, ref[i], allowed};
  });
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
