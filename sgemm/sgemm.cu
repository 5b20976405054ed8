// The sgemm harness: everything a step of this folder does not change — the flags, the inputs, the
// cuBLAS and CPU references, the checks, timing, the ceilings and the report.
//
// How a run checks a step (the checked run and the final run of common/run.h, C poisoned with NaN
// before each):
//   1. every element of C against cuBLAS fp32 (pedantic math) on the same inputs, within
//      c K eps (|A|·|B|)ij; the magnitudes come from a second cuBLAS GEMM on |A| and |B|;
//   2. independently of cuBLAS, fp64 CPU rows and columns of C — random ones and always the last
//      row and the last column, which lie in the edge tiles — or the whole C when the problem is
//      small; with --init analytic the closed form replaces the fp64 dot products.
// cuBLAS's own C passes check 2 before it is used as a reference or timed as the ceiling; a wrong
// one exits 3 (ladder::require_correct_ceiling).
#include "sgemm/sgemm.cuh"

#include "common/blas.h"
#include "common/buffers.h"
#include "common/cli.h"
#include "common/npy.h"
#include "common/nvtx.h"
#include "common/random.h"
#include "common/report.h"
#include "common/run.h"
#include "common/timing.h"
#include "common/verify.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace sgemm {

// ---- Sizes, FLOPs, bytes, grids -----------------------------------------------------------------

double flops(int64_t m, int64_t n, int64_t k) { return ladder::gemm_flops(m, n, k); }

double aat_min_bytes(int64_t m, int64_t k) {
  const double dm = static_cast<double>(m);
  return 4.0 * dm * static_cast<double>(k) + 4.0 * dm * dm;
}

TileGrid tile_grid(int64_t m, int64_t n, int tile_m, int tile_n) {
  const int64_t tiles_m = (m + tile_m - 1) / tile_m, tiles_n = (n + tile_n - 1) / tile_n;
  if (tiles_m > INT_MAX / tiles_n)
    throw ladder::UsageError("a " + std::to_string(m) + " x " + std::to_string(n) + " C needs " +
                             "more than 2^31 - 1 tiles of " + std::to_string(tile_m) + " x " +
                             std::to_string(tile_n));
  return {static_cast<unsigned>(tiles_m * tiles_n), tiles_n};
}

int64_t square_band_rows(int64_t resident, int64_t tiles_m, int tile_m, int tile_n) {
  const double ideal = std::sqrt(double(resident) * tile_n / tile_m);
  return std::max<int64_t>(1, std::min<int64_t>(tiles_m, std::llround(ideal)));
}

int64_t tail_parts_of(int64_t units, int64_t workers, int64_t ktiles) {
  const int64_t rest = units % workers;
  if (units <= workers || rest == 0) return 1;
  int64_t best = 1, best_rounds = 1;  // the tail takes best_rounds / best units' times
  for (int64_t parts = 2; parts <= 4 && ktiles >= 8 * parts; ++parts) {
    if (workers % parts) continue;
    const int64_t rounds = (rest * parts + workers - 1) / workers;
    if (rounds * best < best_rounds * parts) {
      best = parts;
      best_rounds = rounds;
    }
  }
  return best;
}

void throw_unknown_tile(const char* step_id, const std::string& want, const std::vector<const char*>& known) {
  std::string list;
  for (size_t i = 0; i < known.size(); ++i) list += (i ? ", " : "") + std::string(known[i]);
  throw ladder::UsageError(std::string(step_id) + ": unknown --tile '" + want + "' (known: " + list + ")");
}

LaunchFn pick_tile(const char* step_id, const std::string& tile, const TileCandidate* candidates,
                   size_t count, const char* default_name) {
  const std::string want = tile.empty() ? std::string(default_name) : tile;
  std::vector<const char*> known;
  for (size_t i = 0; i < count; ++i) {
    if (want == candidates[i].name) return candidates[i].launch;
    known.push_back(candidates[i].name);
  }
  throw_unknown_tile(step_id, want, known);
}

// ---- References -----------------------------------------------------------------------------------

namespace {

// Dot product of row i of A with y (k values) in fp64, and its magnitude.
inline void dot_row(const float* a_row, const double* y, int64_t k, double* value, double* magnitude) {
  double s = 0, s_abs = 0;
  for (int64_t p = 0; p < k; ++p) {
    const double t = static_cast<double>(a_row[p]) * y[p];
    s += t;
    s_abs += std::fabs(t);
  }
  *value = s;
  *magnitude = s_abs;
}

// Column j of the right-hand operand: B[:, j], or row j of A for A·Aᵀ.
std::vector<double> right_column(const Operands& op, int64_t j) {
  std::vector<double> y(static_cast<size_t>(op.k));
  for (int64_t p = 0; p < op.k; ++p)
    y[p] = op.B ? static_cast<double>(op.B[p * op.n + j]) : static_cast<double>(op.A[j * op.k + p]);
  return y;
}

}  // namespace

void reference_cols(const Operands& op, const std::vector<int64_t>& cols, double* ref, double* mag) {
  for (size_t c = 0; c < cols.size(); ++c) {
    const std::vector<double> y = right_column(op, cols[c]);
    double* r = ref + static_cast<int64_t>(c) * op.m;
    double* g = mag + static_cast<int64_t>(c) * op.m;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < op.m; ++i) dot_row(op.A + i * op.k, y.data(), op.k, &r[i], &g[i]);
  }
}

void reference_rows(const Operands& op, const std::vector<int64_t>& rows, double* ref, double* mag) {
  const int64_t n = op.n, k = op.k, count = static_cast<int64_t>(rows.size());
  if (!op.B) {
    // A·Aᵀ: C[i][j] = A_i · A_j, both rows contiguous; row i of C is column i (C is symmetric), but
    // it is computed here on its own, from row i of A against every row of A. One parallel region
    // for all the rows: a region per row (m of them for a whole C) costs more than the dot products
    // when k is small and the machine is busy.
    std::vector<double> y(static_cast<size_t>(count * k));
    for (int64_t r = 0; r < count; ++r) {
      const std::vector<double> row = right_column(op, rows[r]);
      std::copy(row.begin(), row.end(), y.begin() + r * k);
    }
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t r = 0; r < count; ++r)
      for (int64_t j = 0; j < n; ++j)
        dot_row(op.A + j * k, y.data() + r * k, k, &ref[r * n + j], &mag[r * n + j]);
    return;
  }
  // C = A·B: row i of C is sum_p A[i][p] B[p][:], accumulated over column chunks so that B is read
  // along its rows (a column of B would touch one cache line per element).
  constexpr int64_t kChunk = 512;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (int64_t r = 0; r < count; ++r)
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t i = rows[r], j0 = c * kChunk, width = std::min(kChunk, n - j0);
      double acc[kChunk] = {}, acc_abs[kChunk] = {};
      for (int64_t p = 0; p < k; ++p) {
        const double a = op.A[i * k + p];
        const float* b = op.B + p * n + j0;
        for (int64_t j = 0; j < width; ++j) {
          const double t = a * static_cast<double>(b[j]);
          acc[j] += t;
          acc_abs[j] += std::fabs(t);
        }
      }
      for (int64_t j = 0; j < width; ++j) {
        ref[r * n + j0 + j] = acc[j];
        mag[r * n + j0 + j] = acc_abs[j];
      }
    }
}

bool analytic_fits(int64_t m, int64_t n, int64_t k) {
  // A[i][p] = i + p up to (m - 1) + (k - 1); B[p][j] = p - j down to -(n - 1) and up to k - 1.
  // Every integer of magnitude up to 2^24 is an exact float.
  constexpr int64_t kExact = int64_t(1) << 24;
  return m - 1 <= kExact - (k - 1) && k - 1 <= kExact && n - 1 <= kExact;
}

namespace {

using i128 = __int128;

i128 sum_p(i128 count) { return count * (count - 1) / 2; }                       // sum_{p<N} p
i128 sum_p2(i128 count) { return (count - 1) * count * (2 * count - 1) / 6; }    // sum_{p<N} p^2
// sum_{p<N} (i + p)(p - j) = sum p^2 + (i - j) sum p - N i j
i128 sum_products(i128 i, i128 j, i128 count) {
  return sum_p2(count) + (i - j) * sum_p(count) - count * i * j;
}

}  // namespace

Exact analytic_gemm(int64_t i, int64_t j, int64_t k) {
  const i128 total = sum_products(i, j, k);
  // Terms with p < j are <= 0 (i + p >= 0, p - j < 0), the others >= 0: flip the first ones.
  const i128 negative = sum_products(i, j, std::min(j, k));
  return {static_cast<double>(total), static_cast<double>(total - 2 * negative)};
}

Exact analytic_aat(int64_t i, int64_t j, int64_t k) {
  const i128 K = k, I = i, J = j;
  const i128 total = K * I * J + (I + J) * sum_p(K) + sum_p2(K);
  return {static_cast<double>(total), static_cast<double>(total)};
}

std::vector<int64_t> sample_indices(int64_t extent, int count, uint64_t seed, uint64_t stream) {
  std::vector<int64_t> out;
  if (extent - 1 <= count) {
    for (int64_t i = 0; i < extent; ++i) out.push_back(i);
    return out;
  }
  for (uint64_t draw = 0; static_cast<int>(out.size()) < count; ++draw) {
    const int64_t i = static_cast<int64_t>(ladder::random_bits(seed, stream, draw) %
                                           static_cast<uint64_t>(extent - 1));
    if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
  }
  out.push_back(extent - 1);
  std::sort(out.begin(), out.end());
  return out;
}

namespace {
// K u, capped where gamma_K stops being a useful bound (see sgemm.cuh).
double k_u(int64_t k) { return std::min(static_cast<double>(k) * ladder::kFloatEps, 0.25); }
}  // namespace

ladder::ErrorBound bound_vs_exact(int64_t k) {
  return {static_cast<double>(k), ladder::kFloatEps, 1.01 / (1.0 - k_u(k))};
}

ladder::ErrorBound bound_vs_cublas(int64_t k) {
  const double ku = k_u(k), gamma = ku / (1.0 - ku);
  return {static_cast<double>(k), ladder::kFloatEps, 2.0 / ((1.0 - ku) * (1.0 - gamma))};
}

namespace {
// ((1 + u_t)^2 (1 + gamma'_K) - 1): the TF32 error factor of sgemm.cuh; past K u_acc = 1/4 gamma'_K
// keeps growing linearly, with its denominator held at 3/4 (as the fp32 bounds hold c).
double tf32_factor(int64_t k, Tf32Input input) {
  const double ut = input == Tf32Input::rounded ? kTf32InputEps / 2 : kTf32InputEps;
  const double ku = static_cast<double>(k) * kTf32AccumEps, gamma = ku / (1.0 - std::min(ku, 0.25));
  const double in = (1.0 + ut) * (1.0 + ut);
  return in * (1.0 + gamma) - 1.0;
}
}  // namespace

ladder::ErrorBound bound_tf32_vs_exact(int64_t k, Tf32Input input) {
  const double kd = static_cast<double>(k);
  return {kd, ladder::kFloatEps, 1.01 * tf32_factor(k, input) / (kd * ladder::kFloatEps)};
}

ladder::ErrorBound bound_tf32_vs_cublas(int64_t k, Tf32Input input) {
  const double kd = static_cast<double>(k), ku = k_u(k), gamma = ku / (1.0 - ku);
  return {kd, ladder::kFloatEps, (tf32_factor(k, input) + gamma) / (1.0 - gamma) / (kd * ladder::kFloatEps)};
}

ladder::ErrorBound exact_bound(int64_t k) { return {static_cast<double>(k), ladder::kFloatEps, 0.0}; }

void fill_integers(float* values, int64_t count, uint64_t seed, uint64_t stream) {
  ladder::fill_uniform(values, count, seed, stream, -kIntegerMax, kIntegerMax + 1.0f);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < count; ++i) values[i] = std::min(std::floor(values[i]), float(kIntegerMax));
}

// ---- cuBLAS ---------------------------------------------------------------------------------------

namespace {

// The harness's cuBLAS handles, alive while run() runs: the pedantic one (00_cublas launches through
// it) and, for the tf32 series, a TF32 one (tf32_00_cublas and the series' ceiling).
const ladder::Cublas* g_blas = nullptr;
const ladder::Cublas* g_blas_tf32 = nullptr;

// Points `slot` at `b` for the lifetime of the scope.
class BlasScope {
 public:
  BlasScope(const ladder::Cublas*& slot, const ladder::Cublas* b) : slot_(slot) { slot_ = b; }
  ~BlasScope() { slot_ = nullptr; }
  BlasScope(const BlasScope&) = delete;
  BlasScope& operator=(const BlasScope&) = delete;

 private:
  const ladder::Cublas*& slot_;
};

const ladder::Cublas& blas() {
  if (!g_blas) throw std::logic_error("sgemm::cublas_sgemm called outside sgemm::run");
  return *g_blas;
}

// C (m x n) = A (m x k) · B (k x n), or A · Aᵀ when B is null.
void blas_gemm(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k,
               cudaStream_t stream) {
  const ladder::GemmShape s = B ? ladder::GemmShape{m, n, k, false, false, k, n, n}
                                : ladder::GemmShape{m, m, k, false, true, k, k, m};
  ladder::gemm_row_major(blas(), s, 1.0f, A, B ? B : A, 0.0f, C, stream);
}

__global__ void abs_in_place(float* x, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x)
    x[i] = fabsf(x[i]);
}

void abs_on_device(const ladder::DeviceInfo& dev, float* x, int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  abs_in_place<<<ladder::resident_blocks(dev, 256), 256, 0, stream>>>(x, count);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void cublas_sgemm(const Gemm& g) { blas_gemm(g.A, g.B, g.C, g.m, g.n, g.k, g.stream); }

// ---- cuBLAS TF32 (the tf32 series) ----------------------------------------------------------------

namespace {

// C = A·B with cuBLAS in TF32 (CUBLAS_COMPUTE_32F_FAST_TF32): the tf32 series' reference and ceiling.
void blas_gemm_tf32(const float* A, const float* B, float* C, int64_t m, int64_t n, int64_t k,
                    cudaStream_t stream) {
  if (!g_blas_tf32) throw std::logic_error("sgemm::cublas_sgemm_tf32 called outside sgemm::run of a tf32 step");
  ladder::gemm_row_major(*g_blas_tf32, ladder::GemmShape{m, n, k, false, false, k, n, n}, 1.0f, A, B, 0.0f, C,
                         stream);
}

}  // namespace

void cublas_sgemm_tf32(const Gemm& g) { blas_gemm_tf32(g.A, g.B, g.C, g.m, g.n, g.k, g.stream); }

// ---- The CPU check ----------------------------------------------------------------------------------

namespace {

// A report of one row or column, checked with a 1-D shape, relabelled "[i,j] ..." and tagged.
void relabel(ladder::VerifyReport& r, int64_t fixed, bool fixed_is_row, const char* tag) {
  for (std::string& line : r.first_bad) {
    const size_t close = line.find(']');
    if (line.empty() || line[0] != '[' || close == std::string::npos) continue;
    const std::string free = line.substr(1, close - 1);
    const std::string idx = fixed_is_row ? std::to_string(fixed) + "," + free
                                         : free + "," + std::to_string(fixed);
    line = "[" + idx + line.substr(close) + " (" + tag + ")";
  }
}

void tag_lines(ladder::VerifyReport& r, const char* tag) {
  for (std::string& line : r.first_bad) line += std::string(" (") + tag + ")";
}

// The fp64 CPU (or closed-form) reference: the whole C, or sampled rows and columns of it.
class CpuReference {
 public:
  CpuReference(const Operands& op, bool analytic, uint64_t seed, int samples) : op_(op) {
    ladder::NvtxRange r("CPU reference");
    // Small problems: all of C (2^27 multiply-adds, 2^22 elements at most).
    const double work = static_cast<double>(op.m) * static_cast<double>(op.n) * static_cast<double>(op.k);
    full_ = work <= double(1 << 27) && static_cast<double>(op.m) * static_cast<double>(op.n) <= double(1 << 22);
    if (full_) {
      for (int64_t i = 0; i < op.m; ++i) rows_.push_back(i);
    } else {
      rows_ = sample_indices(op.m, samples, seed, 11);
      cols_ = sample_indices(op.n, samples, seed, 12);
    }
    row_ref_.assign(rows_.size() * static_cast<size_t>(op.n), 0.0);
    row_mag_.assign(row_ref_.size(), 0.0);
    col_ref_.assign(cols_.size() * static_cast<size_t>(op.m), 0.0);
    col_mag_.assign(col_ref_.size(), 0.0);
    if (analytic) {
      fill_closed_form();
    } else {
      reference_rows(op, rows_, row_ref_.data(), row_mag_.data());
      reference_cols(op, cols_, col_ref_.data(), col_mag_.data());
    }
    tag_ = analytic ? "closed form" : "fp64 CPU";
  }

  // Bytes this reference holds, for the memory guard, before it is built.
  static size_t host_bytes(int64_t m, int64_t n, int64_t k, int samples) {
    const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    const bool full = work <= double(1 << 27) && static_cast<double>(m) * static_cast<double>(n) <= double(1 << 22);
    const int64_t elems = full ? m * n : (samples + 1) * (m + n);
    return 2 * ladder::bytes_of<double>(elems);
  }

  ladder::VerifyReport check(const float* got, const ladder::ErrorBound& bound) const {
    const int64_t m = op_.m, n = op_.n;
    if (full_) {
      ladder::VerifyReport r = ladder::verify_bounded(got, row_ref_.data(), row_mag_.data(), m * n, bound, {m, n});
      tag_lines(r, tag_);
      return r;
    }
    ladder::VerifyReport all;
    for (size_t r = 0; r < rows_.size(); ++r) {
      const int64_t off = static_cast<int64_t>(r) * n;
      ladder::VerifyReport v = ladder::verify_bounded(got + rows_[r] * n, row_ref_.data() + off,
                                                      row_mag_.data() + off, n, bound, {n});
      relabel(v, rows_[r], true, tag_);
      all.merge(v);
    }
    std::vector<float> column(static_cast<size_t>(m));
    for (size_t c = 0; c < cols_.size(); ++c) {
      for (int64_t i = 0; i < m; ++i) column[i] = got[i * n + cols_[c]];
      const int64_t off = static_cast<int64_t>(c) * m;
      ladder::VerifyReport v = ladder::verify_bounded(column.data(), col_ref_.data() + off,
                                                      col_mag_.data() + off, m, bound, {m});
      relabel(v, cols_[c], false, tag_);
      all.merge(v);
    }
    return all;
  }

  // The largest |got - ref| / (|A|·|B|)ij over the elements this reference holds: the measured error
  // against fp64 in units of the magnitude (the quantity the bounds limit; 2^-24 K at most for fp32).
  double max_relative(const float* got) const {
    const int64_t m = op_.m, n = op_.n;
    double worst = 0;
    auto take = [&](double g, double ref, double mag) {
      if (mag > 0) worst = std::max(worst, std::fabs(g - ref) / mag);
    };
    if (full_) {
      for (int64_t i = 0; i < m * n; ++i) take(got[i], row_ref_[i], row_mag_[i]);
      return worst;
    }
    for (size_t r = 0; r < rows_.size(); ++r)
      for (int64_t j = 0; j < n; ++j) take(got[rows_[r] * n + j], row_ref_[r * n + j], row_mag_[r * n + j]);
    for (size_t c = 0; c < cols_.size(); ++c)
      for (int64_t i = 0; i < m; ++i) take(got[i * n + cols_[c]], col_ref_[c * m + i], col_mag_[c * m + i]);
    return worst;
  }

  std::string describe() const {
    if (full_) return std::string("all of C against the ") + tag_;
    return std::to_string(rows_.size()) + " rows and " + std::to_string(cols_.size()) +
           " columns (the last ones included) against the " + tag_;
  }

 private:
  void fill_closed_form() {
    const bool aat = op_.B == nullptr;
    auto exact = [&](int64_t i, int64_t j) { return aat ? analytic_aat(i, j, op_.k) : analytic_gemm(i, j, op_.k); };
    const int64_t n = op_.n, m = op_.m, nr = static_cast<int64_t>(rows_.size()),
                  nc = static_cast<int64_t>(cols_.size());
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t r = 0; r < nr; ++r)
      for (int64_t j = 0; j < n; ++j) {
        const Exact e = exact(rows_[r], j);
        row_ref_[r * n + j] = e.value;
        row_mag_[r * n + j] = e.magnitude;
      }
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t c = 0; c < nc; ++c)
      for (int64_t i = 0; i < m; ++i) {
        const Exact e = exact(i, cols_[c]);
        col_ref_[c * m + i] = e.value;
        col_mag_[c * m + i] = e.magnitude;
      }
  }

  Operands op_;
  bool full_ = false;
  const char* tag_ = "";
  std::vector<int64_t> rows_, cols_;
  std::vector<double> row_ref_, row_mag_, col_ref_, col_mag_;
};

void fill_analytic(float* A, float* B, int64_t m, int64_t n, int64_t k) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) A[i * k + p] = static_cast<float>(i + p);
  if (!B) return;
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) B[p * n + j] = static_cast<float>(p - j);
}

void to_double(const float* in, double* out, int64_t count) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < count; ++i) out[i] = in[i];
}

constexpr int kSampledLines = 8;  // random rows (and columns) the CPU checks, besides the last one

}  // namespace

// ---- The run -----------------------------------------------------------------------------------------

int run(const Step& step, int argc, char** argv) {
  const ladder::StepInfo info = ladder::StepInfo::from_id(step.id);
  const bool aat = info.series == "aat";
  if (aat ? !step.aat : !step.launch)
    throw std::logic_error(info.id + ": a step of series '" + info.series + "' needs its launcher");
  // The tf32 series: TF32 bounds, the cuBLAS TF32 ceiling (fp32 steps: everything as before).
  const bool tf32 = step.math == Math::tf32;
  if (tf32 != (info.series == "tf32"))
    throw std::logic_error(info.id + ": Step::math must be tf32 exactly for the series 'tf32'");

  int64_t m = aat ? kAatDefaultM : kDefaultM, n = kDefaultN, k = aat ? kAatDefaultK : kDefaultK;
  std::string init = "random", tile;
  ladder::Cli cli("sgemm_" + info.name,
                  (aat ? std::string("C = A·Aᵀ, A m x k, C m x m, fp32 row-major (")
                       : std::string("C = A·B, A m x k, B k x n, C m x n, fp32 row-major (")) + info.id + ")");
  cli.add_size("m", &m, aat ? "rows of A; C is m x m" : "rows of A and C");
  if (!aat) cli.add_size("n", &n, "columns of B and C");
  cli.add_size("k", &k, aat ? "columns of A (the length of each dot product)" : "columns of A, rows of B");
  cli.add_choice("init", &init, {"random", "analytic", "integers"},
                 "inputs: uniform in [-1, 1) from --seed; the post's A[i][j] = i + j, B[i][j] = i - j; or "
                 "integers in [-8, 8] from --seed, exact in TF32 and fp32, C checked for equality");
  if (!aat) cli.add_text("tile", &tile, "tiling of a tunable step (BMxBNxBK_TMxTN); other steps take none");
  if (!cli.parse(argc, argv)) return ladder::kExitOk;
  const ladder::CommonOptions& opt = cli.common;
  if (aat) n = m;
  if (!tile.empty() && !step.tunable)
    throw ladder::UsageError(info.id + " is not tunable: it takes no --tile (only tunable steps do)");
  const bool analytic = init == "analytic", integers = init == "integers";
  // The step's bounds: against the exact (fp64 CPU, closed form) and the cuBLAS fp32 reference;
  // equality for integer inputs, where every product and partial sum is exact (sgemm.cuh).
  const ladder::ErrorBound step_exact = integers ? exact_bound(k)
                                        : tf32   ? bound_tf32_vs_exact(k, step.tf32_input)
                                                 : bound_vs_exact(k);
  const ladder::ErrorBound step_blas = integers ? exact_bound(k)
                                       : tf32   ? bound_tf32_vs_cublas(k, step.tf32_input)
                                                : bound_vs_cublas(k);
  if (integers && k > kMaxIntegerK)
    throw ladder::UsageError("--init integers keeps every partial sum an exact float only up to k = " +
                             std::to_string(kMaxIntegerK));
  if (analytic && !analytic_fits(m, n, k))
    throw ladder::UsageError("--init analytic needs every A[i][j] = i + j and B[i][j] = i - j to be an "
                             "exact float: m + k - 2, k - 1 and n - 1 at most 2^24");

  ladder::Result res;
  res.step = info;
  res.device = ladder::init_device(opt);
  if (aat) res.size = {{"m", m}, {"k", k}};
  else res.size = {{"m", m}, {"n", n}, {"k", k}};
  res.metric_unit = aat ? "GB/s" : "GFLOP/s";
  res.verify_skipped = !opt.verify;
  ladder::NvtxRange step_range(info.id);
  const std::string what = info.id + " at m=" + std::to_string(m) + (aat ? "" : " n=" + std::to_string(n)) +
                           " k=" + std::to_string(k);

  // Step 1: the memory guard, before anything is allocated. X holds cuBLAS's C (the reference, then
  // the magnitudes, then the ceiling's runs).
  const int64_t a_count = ladder::checked_count({m, k}, sizeof(float));
  const int64_t b_count = aat ? 0 : ladder::checked_count({k, n}, sizeof(float));
  const int64_t c_count = ladder::checked_count({m, n}, sizeof(float));
  const bool use_x = opt.verify || opt.ceiling;
  const size_t c_bytes = ladder::bytes_of<float>(c_count);
  // The step's scratch for this problem and tile (split-K partials), if it has any.
  const Gemm problem{nullptr, nullptr, nullptr, m, n, k, nullptr, &res.device, tile};
  if (!aat && step.require_size) step.require_size(problem);
  const size_t w_bytes = !aat && step.workspace_bytes ? step.workspace_bytes(problem) : 0;
  ladder::MemoryNeeds needs;
  needs.device = ladder::saturating_add(
      ladder::saturating_add(ladder::bytes_of<float>(a_count), ladder::bytes_of<float>(b_count)),
      ladder::saturating_add(ladder::saturating_add(c_bytes, use_x ? c_bytes : 0), w_bytes));
  needs.host = ladder::saturating_add(
      ladder::saturating_add(ladder::bytes_of<float>(a_count), ladder::bytes_of<float>(b_count)), c_bytes);
  if (opt.verify) {
    needs.host = ladder::saturating_add(needs.host, 2 * ladder::bytes_of<double>(c_count));  // cuBLAS C, |A|·|B|
    needs.host = ladder::saturating_add(needs.host, CpuReference::host_bytes(m, n, k, kSampledLines));
  }
  ladder::require_memory(needs, what);

  // The aat ladder's ceiling, the copy ceiling, on its own buffers before this step's exist.
  const ladder::TimingPlan plan = ladder::TimingPlan::from(opt);
  if (aat && opt.ceiling)
    res.ceiling = ladder::measure_copy_ceiling(res.device, plan, 4.0 * double(m) * double(k), 4.0 * double(m) * double(m));
  // A skinny C = A·B (m or n at most kSkinny) is bound by bandwidth, not FMAs: each step is also
  // reported against A, B and C moved once at the copy ceiling's bandwidth (extra.pct_of_copy_bound).
  const bool skinny = !aat && (m <= kSkinny || n <= kSkinny);
  std::optional<ladder::Ceiling> copy;
  if (skinny && opt.ceiling)
    copy = ladder::measure_copy_ceiling(res.device, plan, 4.0 * (double(m) * double(k) + double(k) * double(n)),
                                        4.0 * double(m) * double(n));

  // Step 2: the inputs.
  ladder::HostBuffer<float> hA(a_count), hB(b_count), hC(c_count);
  {
    ladder::NvtxRange r("inputs");
    if (analytic) {
      fill_analytic(hA.get(), hB.get(), m, n, k);
    } else if (integers) {
      fill_integers(hA.get(), a_count, opt.seed, 1);
      if (!aat) fill_integers(hB.get(), b_count, opt.seed, 2);
    } else {
      ladder::fill_uniform(hA.get(), a_count, opt.seed, 1, -1.f, 1.f);
      if (!aat) ladder::fill_uniform(hB.get(), b_count, opt.seed, 2, -1.f, 1.f);
    }
  }
  const Operands op{hA.get(), aat ? nullptr : hB.get(), m, n, k};

  ladder::Stream stream;  // outlives the cuBLAS handle that was last set to it
  ladder::Cublas cublas;
  BlasScope scope(g_blas, &cublas);
  std::optional<ladder::Cublas> cublas_tf32;
  if (tf32) cublas_tf32.emplace(ladder::BlasMath::tf32);
  BlasScope scope_tf32(g_blas_tf32, tf32 ? &*cublas_tf32 : nullptr);
  ladder::DeviceBuffer<float> dA(a_count), dB(b_count), dC(c_count), dX(use_x ? c_count : 0);
  ladder::DeviceBuffer<unsigned char> dW(static_cast<int64_t>(w_bytes));
  auto upload = [&] {
    CUDA_CHECK(cudaMemcpyAsync(dA.get(), hA.get(), hA.bytes(), cudaMemcpyHostToDevice, stream));
    if (!aat) CUDA_CHECK(cudaMemcpyAsync(dB.get(), hB.get(), hB.bytes(), cudaMemcpyHostToDevice, stream));
    stream.sync();
  };
  upload();
  const float* d_right = aat ? nullptr : dB.get();
  auto read_back = [&](const ladder::DeviceBuffer<float>& d) {
    CUDA_CHECK(cudaMemcpyAsync(hC.get(), d.get(), c_bytes, cudaMemcpyDeviceToHost, stream));
    stream.sync();
  };

  // Step 3: the references (the checks only). cuBLAS's C must itself pass the CPU check.
  std::vector<double> blas_ref, blas_mag;
  std::unique_ptr<CpuReference> cpu;
  if (opt.verify) {
    cpu = std::make_unique<CpuReference>(op, analytic, opt.seed, kSampledLines);
    ladder::NvtxRange r("cuBLAS reference and magnitudes");
    blas_gemm(dA.get(), d_right, dX.get(), m, n, k, stream);
    read_back(dX);
    ladder::VerifyReport own = cpu->check(hC.get(), integers ? exact_bound(k) : bound_vs_exact(k));
    ladder::require_correct_ceiling(own, "cuBLAS SGEMM (the reference)");
    blas_ref.resize(static_cast<size_t>(c_count));
    to_double(hC.get(), blas_ref.data(), c_count);
    // (|A|·|B|)ij: the same GEMM on |A| and |B|, then the inputs restored.
    abs_on_device(res.device, dA.get(), a_count, stream);
    abs_on_device(res.device, dB.get(), b_count, stream);
    blas_gemm(dA.get(), d_right, dX.get(), m, n, k, stream);
    read_back(dX);
    blas_mag.resize(static_cast<size_t>(c_count));
    to_double(hC.get(), blas_mag.data(), c_count);
    upload();
  }

  // Step 4: the step — checked, timed, checked again (common/run.h), C poisoned before each check.
  const Gemm g{dA.get(), dB.get(), dC.get(), m, n, k, stream, &res.device, tile, dW.get(), w_bytes};
  const Aat a{dA.get(), dC.get(), m, k, stream, &res.device};
  ladder::Phase kernel;
  kernel.name = "kernel";
  kernel.stream = stream;
  kernel.run = [&] { aat ? step.aat(a) : step.launch(g); };
  kernel.poison = [&] {  // the scratch too: a partial result no thread wrote must show in C
    dC.poison(stream);
    dW.poison(stream);
  };
  double max_rel_err = 0;  // the largest |C - fp64| / (|A|·|B|) over the checked runs (CPU elements)
  kernel.check = [&] {
    read_back(dC);
    ladder::VerifyReport v = ladder::verify_bounded(hC.get(), blas_ref.data(), blas_mag.data(), c_count,
                                                    step_blas, {m, n});
    tag_lines(v, "cuBLAS");
    v.merge(cpu->check(hC.get(), step_exact));
    if (!aat) max_rel_err = std::max(max_rel_err, cpu->max_relative(hC.get()));
    return v;
  };
  res.kernel = ladder::measure_phase(res, kernel, opt, [&] {
    if (opt.dump_dir.empty()) return;
    read_back(dC);
    ladder::write_npy(opt.dump_dir, "A", hA.get(), {m, k});
    if (!aat) ladder::write_npy(opt.dump_dir, "B", hB.get(), {k, n});
    ladder::write_npy(opt.dump_dir, "C", hC.get(), {m, n});
  });
  const double ms = res.kernel.median;
  if (aat) {
    res.metric_value = ladder::gbps(aat_min_bytes(m, k), ms);
    res.min_bytes = aat_min_bytes(m, k);
    res.flops = flops(m, m, k);
    res.extras.push_back({"gflops", flops(m, m, k) / (ms * 1e6), "GFLOP/s"});
  } else {
    res.metric_value = flops(m, n, k) / (ms * 1e6);
    res.min_bytes = 4.0 * (double(m) * double(k) + double(k) * double(n) + double(m) * double(n));
    res.flops = flops(m, n, k);
    res.compute = tf32 ? "tf32" : "fp32";  // the record's pct_of_spec_fp32 or pct_of_spec_tf32
    if (copy) {
      const double bytes = 4.0 * (double(m) * double(k) + double(k) * double(n) + double(m) * double(n));
      const double floor_ms = bytes / (copy->value * 1e6);
      res.extras.push_back({"copy_bound_ms", floor_ms, "ms: A, B and C moved once at the copy ceiling's GB/s"});
      res.extras.push_back({"pct_of_copy_bound", 100.0 * floor_ms / ms, "% of the copy bound (skinny shapes)"});
    }
    if (opt.verify)
      res.extras.push_back({"max_rel_err_fp64", max_rel_err,
                            "max |C - fp64| / (|A|·|B|)ij over the CPU-checked elements"});
  }

  // Step 5: cuBLAS on the same inputs in this process: the main ladder's ceiling; shown beside the
  // aat steps (their ceiling is the copy).
  if (opt.ceiling && tf32) {
    // The tf32 series' ceiling: cuBLAS TF32 on the same inputs, its C checked against the fp64 CPU
    // elements with the TF32 bound before it is timed (a wrong ceiling exits 3).
    ladder::NvtxRange r("ceiling: cuBLAS TF32");
    if (opt.verify) {
      blas_gemm_tf32(dA.get(), d_right, dX.get(), m, n, k, stream);
      read_back(dX);
      ladder::require_correct_ceiling(cpu->check(hC.get(), step_exact), "cuBLAS TF32 (the ceiling)");
      res.extras.push_back({"cublas_tf32_max_rel_err_fp64", cpu->max_relative(hC.get()),
                            "cuBLAS TF32's max |C - fp64| / (|A|·|B|)ij, same elements"});
    }
    const ladder::Stats s = ladder::time_gpu(
        [&] { blas_gemm_tf32(dA.get(), d_right, dX.get(), m, n, k, stream); }, stream, plan);
    res.extras.push_back({"cublas_ms", s.median, "ms (cuBLAS TF32, same inputs)"});
    ladder::Ceiling c;
    c.name = "cuBLAS TF32 (CUBLAS_COMPUTE_32F_FAST_TF32)";
    c.unit = "GFLOP/s";
    c.value = flops(m, n, k) / (s.median * 1e6);
    char detail[96];
    std::snprintf(detail, sizeof detail, "%.4f ms median of %d reps, same inputs", s.median, s.reps);
    c.detail = detail;
    res.ceiling = c;
  } else if (opt.ceiling) {
    ladder::NvtxRange r("ceiling: cuBLAS SGEMM");
    const ladder::Stats s = ladder::time_gpu([&] { blas_gemm(dA.get(), d_right, dX.get(), m, n, k, stream); },
                                             stream, plan);
    const double blas_gflops = flops(m, n, k) / (s.median * 1e6);
    res.extras.push_back({"cublas_ms", s.median, aat ? "ms (cublasSgemm with Aᵀ, same A)" : "ms (cuBLAS, same inputs)"});
    if (aat) {
      res.extras.push_back({"cublas_gbps", ladder::gbps(aat_min_bytes(m, k), s.median), "GB/s (cublasSgemm with Aᵀ)"});
      res.extras.push_back({"cublas_gflops", blas_gflops, "GFLOP/s (cublasSgemm with Aᵀ)"});
    } else {
      ladder::Ceiling c;
      c.name = "cuBLAS SGEMM fp32 (pedantic)";
      c.unit = "GFLOP/s";
      c.value = blas_gflops;
      char detail[96];
      std::snprintf(detail, sizeof detail, "%.4f ms median of %d reps, same inputs", s.median, s.reps);
      c.detail = detail;
      res.ceiling = c;
    }
  }

  if (opt.verify) {
    char c_blas[32], c_cpu[32];
    std::snprintf(c_blas, sizeof c_blas, "%.4f", step_blas.c);
    std::snprintf(c_cpu, sizeof c_cpu, "%.4f", step_exact.c);
    res.notes.push_back(std::string("checked: all of C against cuBLAS") + (tf32 ? " fp32" : "") + " (c = " +
                        c_blas + "); " + cpu->describe() + " (c = " + c_cpu +
                        "); |got - ref| <= c K 2^-24 (|A|·|B|)ij" +
                        (tf32 ? " (the TF32 bound: inputs cut to 10 mantissa bits, sgemm.cuh)" : ""));
  }
  if (analytic) res.notes.push_back("inputs: the post's A[i][j] = i + j, B[i][j] = i - j");
  if (integers) res.notes.push_back("inputs: integers in [-8, 8]; every product and partial sum exact, C checked for equality");
  // What the step chose for this GPU and shape (its describe hook), or the --tile it was given.
  if (step.describe) res.choice = step.describe(g);
  else if (step.tunable) res.choice = tile.empty() ? std::string("the step's default") : tile + " (--tile)";
  return ladder::finish(res, opt);
}

}  // namespace sgemm
