// The avg_matvec harness: everything a step of this folder does not change — the flags, the inputs,
// the reference and its error bound, the memory guard, poisoning, checking, timing, the ceiling and
// the floor.
#include "avg_matvec/avg_matvec.cuh"

#include "common/buffers.h"
#include "common/cli.h"
#include "common/npy.h"
#include "common/nvtx.h"
#include "common/random.h"
#include "common/report.h"
#include "common/run.h"
#include "common/timing.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace avg_matvec {

bool accepts(BlockOfL limit, int64_t L) {
  switch (limit) {
    case BlockOfL::any: return true;
    case BlockOfL::power_of_two: return L <= 1024 && (L & (L - 1)) == 0;
    case BlockOfL::whole_warps: return L <= 1024 && L % 32 == 0;
  }
  return false;
}

void require_supported(BlockOfL limit, const std::string& step_name, int64_t L) {
  if (accepts(limit, L)) return;
  const std::string why =
      limit == BlockOfL::power_of_two
          ? "L <= 1024 and a power of two (one block of L threads; its shared-memory sweep "
            "halves the block)"
          : "L <= 1024 and a multiple of 32 (one block of L threads, whole warps)";
  throw ladder::UsageError(step_name + " takes " + why + "; got --L " + std::to_string(L));
}

void make_inputs(double* input, double* W, const Sizes& s, Init init, uint64_t seed) {
  const int64_t n_in = s.N * s.L * s.M, n_w = s.L * s.L;
  if (init == Init::random) {
    ladder::fill_uniform(input, n_in, seed, 1, -1.0, 1.0);
    ladder::fill_uniform(W, n_w, seed, 2, -1.0, 1.0);
    return;
  }
  // The post's (rand() & 1) + 1, from the same counter-based bits as every other fill.
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n_in; ++i)
    input[i] = 1.0 + static_cast<double>(ladder::random_bits(seed, 1, uint64_t(i)) & 1);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n_w; ++i)
    W[i] = 1.0 + static_cast<double>(ladder::random_bits(seed, 2, uint64_t(i)) & 1);
}

void reference(const double* input, const double* W, const Sizes& s, double* out,
               double* magnitude) {
  const int64_t L = s.L, M = s.M, N = s.N, rows = N * L;
  // Step 1: each row's mean and mean absolute value, reading the row front to back (the post's CPU
  // version walks the rows side by side instead; see 00_cpu).
  std::vector<double> mean(static_cast<size_t>(rows)), mean_abs(static_cast<size_t>(rows));
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const double* x = input + r * M;
    double sum = 0, sum_abs = 0;
    for (int64_t i = 0; i < M; ++i) {
      sum += x[i];
      sum_abs += std::fabs(x[i]);
    }
    mean[r] = sum / static_cast<double>(M);
    mean_abs[r] = sum_abs / static_cast<double>(M);
  }
  // Step 2: out[i][k] = W[i] · mean[k], and the same sum over magnitudes.
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t i = 0; i < L; ++i)
    for (int64_t k = 0; k < N; ++k) {
      const double* w = W + i * L;
      const double* v = mean.data() + k * L;
      const double* a = mean_abs.data() + k * L;
      double acc = 0, mag = 0;
      for (int64_t j = 0; j < L; ++j) {
        acc += w[j] * v[j];
        mag += std::fabs(w[j]) * a[j];
      }
      out[i * N + k] = acc;
      magnitude[i * N + k] = mag;
    }
}

// Posts data: every input is 1 or 2, so a row's sum is an integer <= 2M and, with M a power of two,
// its mean is exact; W · v sums L products <= 4 that are multiples of 1/M, so every partial sum is
// a multiple of 1/M below 4L: exact in any order as long as 4 L M <= 2^53.
bool posts_are_exact(const Sizes& s) {
  return (s.M & (s.M - 1)) == 0 && s.L <= (int64_t(1) << 51) / s.M;
}

// The bound, with u = 2^-53 and gamma_n = n u / (1 - n u) (Higham, "Accuracy and Stability of
// Numerical Algorithms", 3.1). For ANY order of summation, with or without FMA:
//   a row sum of M terms       |s~ - s|  <= gamma_{M-1} sum|x|
//   the mean, s~ / M           one more rounding (two if a step multiplies by a rounded 1/M):
//                              |v~ - v|  <= gamma_{M+1} a,  a = (1/M) sum|x|  (the mean of |x|)
//   out = sum_j W_j v~_j       L products, L - 1 additions:
//                              |o~ - W·v~| <= gamma_L sum_j |W_j| |v~_j|
// and |v~_j| <= (1 + gamma_{M+1}) a_j, so with mag = sum_j |W_j| a_j (the reference's magnitude)
//   |o~ - o| <= (gamma_L + gamma_{M+1} + gamma_L gamma_{M+1}) mag <= gamma_{L+M+1} mag.
// A step and the reference each obey this, so |step - ref| <= 2 gamma_{L+M+1} mag, and
// gamma_n <= (n + 1) u whenever n (n + 1) u <= 1 (n below 9e7), hence terms = L + M + 2 and c = 2:
// a worst case, not a tolerance tuned to pass. A kernel that drops or doubles one element of a mean
// is off by about |x| |W| / M (~5e-4 at the default size), some 10^7 times the bound (~3e-11).
ladder::ErrorBound error_bound(const Sizes& s, Init init) {
  const double terms = static_cast<double>(s.L + s.M + 2);
  if (init == Init::posts && posts_are_exact(s)) return {terms, 0.0, 2.0};  // exact
  return {terms, ladder::kDoubleEps, 2.0};
}

namespace {

std::string size_text(const Sizes& s) {
  return "L=" + std::to_string(s.L) + " M=" + std::to_string(s.M) + " N=" + std::to_string(s.N);
}

}  // namespace

int run(const Step& step, int argc, char** argv) {
  const ladder::StepInfo info = ladder::StepInfo::from_id(step.id);
  Sizes s{kDefaultL, kDefaultM, kDefaultN};
  std::string init_name = "random";
  ladder::Cli cli("avg_matvec_" + info.name,
                  "for each batch k < N: v = the mean of each of the L rows of input[k] (M doubles "
                  "each), out[:, k] = W v, W is L x L; double (" + info.id + ")");
  cli.add_size("L", &s.L, "rows per batch (the post's L); W is L x L");
  cli.add_size("M", &s.M, "doubles per row, averaged (the post's M)");
  cli.add_size("N", &s.N, "batches (the post's N); out is L x N");
  cli.add_choice("init", &init_name, {"random", "posts"},
                 "random: uniform in [-1, 1); posts: 1 or 2, as the post (checked exactly when M "
                 "is a power of two)");
  if (!cli.parse(argc, argv)) return ladder::kExitOk;
  const ladder::CommonOptions& opt = cli.common;
  const Init init = init_name == "posts" ? Init::posts : Init::random;
  // A size this step cannot run is a usage error, whether or not a device is present.
  require_supported(step.limit, info.name, s.L);
  const bool on_gpu = step.runs == Runs::on_gpu;

  ladder::Result res;
  res.step = info;
  res.device = on_gpu ? ladder::init_device(opt) : ladder::init_device_if_present(opt);
  res.size = {{"L", s.L}, {"M", s.M}, {"N", s.N}};
  res.metric_unit = "GB/s";
  res.verify_skipped = !opt.verify;
  ladder::NvtxRange step_range(info.id);
  const std::string what = info.id + " at " + size_text(s);

  // Step 1: sizes, checked before any product is used, and the memory guard before anything is
  // allocated. Host: the inputs and the step's result, plus the reference, its magnitudes and its
  // two N x L scratch arrays when verifying. Device: input, W, out, and the N x L averages of the
  // steps that keep them.
  const int64_t n_in = ladder::checked_count({s.N, s.L, s.M}, sizeof(double));
  const int64_t n_w = ladder::checked_count({s.L, s.L}, sizeof(double));
  const int64_t n_out = ladder::checked_count({s.L, s.N}, sizeof(double));
  const size_t in_bytes = ladder::bytes_of<double>(n_in), w_bytes = ladder::bytes_of<double>(n_w),
               out_bytes = ladder::bytes_of<double>(n_out);
  ladder::MemoryNeeds needs;
  needs.host = in_bytes + w_bytes + out_bytes;
  if (opt.verify) needs.host += 4 * out_bytes;
  if (on_gpu) needs.device = in_bytes + w_bytes + (step.gemm ? 2 : 1) * out_bytes;
  ladder::require_memory(needs, what);

  // The ceiling first, on its own buffers (freed again), before this step's buffers exist.
  const ladder::TimingPlan plan = ladder::TimingPlan::from(opt);
  if (opt.ceiling && res.device.present)
    res.ceiling = ladder::measure_copy_ceiling(res.device, plan, input_bytes(s) + 8.0 * double(s.L) * double(s.L),
                                               8.0 * double(s.L) * double(s.N));

  // At launch-bound sizes, what a caller waits for one device-to-device copy of the input's bytes:
  // the simplest call that touches every input byte, the yardstick of a step's call_ms (step 07).
  ladder::Stats copy_call;
  if (opt.ceiling && res.device.present && on_gpu && in_bytes <= kCopyCallMaxBytes)
    copy_call = ladder::measure_copy_call(in_bytes, plan);

  // Step 2: inputs and reference.
  ladder::HostBuffer<double> h_in(n_in), h_w(n_w), h_out(n_out), ref, mag;
  {
    ladder::NvtxRange r("inputs and reference");
    make_inputs(h_in.get(), h_w.get(), s, init, opt.seed);
    if (opt.verify) {
      ref = ladder::HostBuffer<double>(n_out);
      mag = ladder::HostBuffer<double>(n_out);
      reference(h_in.get(), h_w.get(), s, ref.get(), mag.get());
    }
  }
  const ladder::ErrorBound bound = error_bound(s, init);
  auto check_result = [&] {
    return ladder::verify_bounded(h_out.get(), ref.get(), mag.get(), n_out, bound, {s.L, s.N});
  };
  auto dump = [&] {
    if (opt.dump_dir.empty()) return;
    ladder::write_npy(opt.dump_dir, "input", h_in.get(), {s.N, s.L, s.M});
    ladder::write_npy(opt.dump_dir, "W", h_w.get(), {s.L, s.L});
    ladder::write_npy(opt.dump_dir, "out", h_out.get(), {s.L, s.N});
  };

  std::unique_ptr<ladder::Stream> stream;  // GPU steps only: the CPU step runs without a driver
  ladder::DeviceBuffer<double> d_in, d_w, d_out, d_avg;
  std::unique_ptr<ladder::Cublas> blas;
  double graph_setup_ms = 0;  // set by the steps that record a CUDA Graph (07, 08)
  // Host pointers for the CPU step; the GPU branch below replaces them with device ones.
  Args args{&res.device, s.L, s.M, s.N, h_in.get(), h_w.get(), h_out.get(), nullptr, nullptr,
            nullptr};
  ladder::Phase phase;
  if (!on_gpu) {
    // The CPU step: its loop is the "kernel", on host memory, timed on the host clock.
    phase.name = "CPU loop";
    phase.clock = ladder::Clock::host;
    phase.poison = [&] { std::memset(h_out.get(), 0xFF, out_bytes); };  // NaN
    phase.check = check_result;
    res.notes.push_back(
        "host memory; the bandwidth ceiling and the floor are the GPU's, for scale");
  } else {
    // Step 3: device buffers, filled on the step's stream and complete before the first run.
    stream = std::make_unique<ladder::Stream>();
    const cudaStream_t st = stream->get();
    d_in = ladder::DeviceBuffer<double>(n_in);
    d_w = ladder::DeviceBuffer<double>(n_w);
    d_out = ladder::DeviceBuffer<double>(n_out);
    if (step.gemm) {
      d_avg = ladder::DeviceBuffer<double>(n_out);
      blas = std::make_unique<ladder::Cublas>();
    }
    CUDA_CHECK(cudaMemcpyAsync(d_in.get(), h_in.get(), in_bytes, cudaMemcpyHostToDevice, st));
    CUDA_CHECK(cudaMemcpyAsync(d_w.get(), h_w.get(), w_bytes, cudaMemcpyHostToDevice, st));
    stream->sync();
    args = Args{&res.device, s.L, s.M, s.N, d_in.get(), d_w.get(), d_out.get(), d_avg.get(),
                blas.get(), st, &res.choice, &graph_setup_ms};
    phase.name = "kernel";
    phase.stream = st;
    // The averages too: a GEMM step whose averaging kernel skips a row multiplies a NaN.
    phase.poison = [&, st] {
      d_out.poison(st);
      d_avg.poison(st);
    };
    phase.check = [&] {
      CUDA_CHECK(cudaMemcpy(h_out.get(), d_out.get(), out_bytes, cudaMemcpyDeviceToHost));
      return check_result();
    };
  }

  // Step 4: checked, timed, checked again (common/run.h).
  phase.run = [&] { step.launch(args); };
  res.kernel = ladder::measure_phase(res, phase, opt, dump);

  // Step 5: the metric (input, W and out once each over the time) and the floor: the input's bytes
  // at the bandwidth ceiling of this run (copies and read kernels), the time no step can beat.
  res.metric_value = ladder::gbps(min_bytes(s), res.kernel.median);
  res.min_bytes = min_bytes(s);
  // The averages (one add per input element) and the mat-vecs (2 L^2 per batch).
  res.flops = input_bytes(s) / 8.0 + 2.0 * double(s.L) * double(s.L) * double(s.N);
  if (res.ceiling) {
    const double floor_ms = input_bytes(s) / (res.ceiling->value * 1e9) * 1e3;
    res.extras.push_back({"floor_ms", floor_ms,
                          "ms (the input's bytes at the bandwidth ceiling: copies and read "
                          "kernels)"});
    res.extras.push_back({"pct_of_floor", 100.0 * floor_ms / res.kernel.median,
                          "% (floor_ms / kernel_ms: 100 = as fast as the input can be read)"});
  }
  if (graph_setup_ms > 0)
    res.extras.push_back({"graph_setup_ms", graph_setup_ms,
                          "ms (host time to capture and instantiate the step's CUDA Graph: paid once, "
                          "on the first call with these arguments)"});
  if (copy_call.call_reps > 0) {
    res.extras.push_back({"copy_call_ms", copy_call.call_median,
                          "ms (a caller's wait for one device-to-device copy of the input's bytes)"});
    res.extras.push_back({"call_vs_copy_call", res.kernel.call_median / copy_call.call_median,
                          "x (call_ms / copy_call_ms: 1 = called as fast as a copy of the input)"});
  }
  res.notes.push_back(std::string("inputs: ") +
                      (init == Init::posts ? "posts (1 or 2)" : "random, uniform in [-1, 1)") +
                      (bound.eps == 0.0 ? "; checked exactly"
                                        : "; checked to 2 (L+M+2) eps sum|W||x|/M per element"));
  return ladder::finish(res, opt);
}

}  // namespace avg_matvec
