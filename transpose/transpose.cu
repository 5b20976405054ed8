// The transpose harness: everything a step of this folder does not change.
#include "transpose/transpose.cuh"

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
#include <cstdio>
#include <string>

namespace transpose {

void reference_transpose(const float* in, float* out, int64_t rows, int64_t cols) {
  // 64 x 64 blocks: one block of `in` (16 KiB) and the matching block of `out` stay in L1/L2 while
  // the strided side is walked, so neither side streams a cache line per element.
  constexpr int64_t kBlock = 64;
  const int64_t block_rows = (rows + kBlock - 1) / kBlock, block_cols = (cols + kBlock - 1) / kBlock;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t br = 0; br < block_rows; ++br)
    for (int64_t bc = 0; bc < block_cols; ++bc) {
      const int64_t r_end = std::min(rows, (br + 1) * kBlock), c_end = std::min(cols, (bc + 1) * kBlock);
      for (int64_t c = bc * kBlock; c < c_end; ++c)
        for (int64_t r = br * kBlock; r < r_end; ++r) out[c * rows + r] = in[r * cols + c];
    }
}

const Variant* find_variant(const std::vector<Variant>& variants, const std::string& name) {
  for (const Variant& v : variants)
    if (name == v.name) return &v;
  return nullptr;
}

int run(const Step& step, int argc, char** argv) {
  const ladder::StepInfo info = ladder::StepInfo::from_id(step.id);
  int64_t rows = kDefaultRows, cols = kDefaultCols;
  ladder::Cli cli(std::string("transpose_") + info.name,
                  "out = in^T, in rows x cols, out cols x rows, float (" + info.id + ")");
  cli.add_size("rows", &rows, "rows of the input matrix");
  cli.add_size("cols", &cols, "columns of the input matrix");
  // A tunable step's variants; "auto" (the default) lets the step choose one from the device.
  const char* const kAuto = "auto";
  std::vector<std::string> variants;
  if (!step.variants.empty()) variants.push_back(kAuto);
  for (const Variant& v : step.variants) variants.push_back(v.name);
  std::string variant = variants.empty() ? "" : kAuto;
  if (!variants.empty())
    cli.add_choice("variant", &variant, variants,
                   "this step's kernel (tuning); auto: the step's rule picks one for this GPU");
  if (!cli.parse(argc, argv)) return ladder::kExitOk;
  const ladder::CommonOptions& opt = cli.common;
  const bool copies = step.output == Output::copied;

  ladder::Result res;
  res.step = info;
  res.device = ladder::init_device(opt);

  // The kernel: the step's own, the variant named, or the one the step's rule picks for this GPU.
  LaunchFn launch = step.launch;
  const char* shape = step.shape;
  if (!variants.empty()) {
    std::string why = "named by --variant";
    if (variant == kAuto) {
      variant = step.variants.front().name;
      why = "the step's first candidate (it has no rule)";
      if (step.choose) {
        const Choice c = step.choose(res.device);
        variant = c.name;
        why = c.why;
      }
    }
    const Variant* v = find_variant(step.variants, variant);
    if (!v) throw ladder::UsageError(info.id + ": its rule chose '" + variant + "', no variant of it");
    launch = v->launch;
    shape = v->shape;
    res.choice = variant + ": " + why;
  }
  res.size = {{"rows", rows}, {"cols", cols}};
  res.metric_unit = "GB/s";
  res.verify_skipped = !opt.verify;
  ladder::NvtxRange step_range(info.id);

  // Step 1: the memory guard, before anything is allocated; then the ceiling.
  const std::string what = info.id + " at " + std::to_string(rows) + " x " + std::to_string(cols);
  const int64_t n = ladder::checked_count({rows, cols}, sizeof(float));
  const size_t bytes = ladder::bytes_of<float>(n);
  ladder::MemoryNeeds needs;
  needs.device = 2 * bytes;                      // in, out
  needs.host = (copies ? 2 : 3) * bytes;         // in, result (and the reference)
  ladder::require_memory(needs, what);

  // The ceiling first, on its own buffers (freed again), before this step's buffers exist.
  const ladder::TimingPlan plan = ladder::TimingPlan::from(opt);
  if (opt.ceiling) res.ceiling = ladder::measure_copy_ceiling(res.device, plan, min_bytes(rows, cols) / 2, min_bytes(rows, cols) / 2);

  // Step 2: input and reference.
  ladder::HostBuffer<float> h_in(n), h_out(n), ref;
  {
    ladder::NvtxRange r("input and reference");
    ladder::fill_uniform(h_in.get(), n, opt.seed, 1, -1.f, 1.f);
    if (!copies && opt.verify) {
      ref = ladder::HostBuffer<float>(n);
      reference_transpose(h_in.get(), ref.get(), rows, cols);
    }
  }
  // The output's shape: cols x rows, or rows x cols for the copy.
  const std::vector<int64_t> out_shape = copies ? std::vector<int64_t>{rows, cols}
                                                : std::vector<int64_t>{cols, rows};

  ladder::Stream stream;
  ladder::DeviceBuffer<float> d_in(n), d_out(n);
  CUDA_CHECK(cudaMemcpyAsync(d_in.get(), h_in.get(), bytes, cudaMemcpyHostToDevice, stream));

  // Step 3: checked, timed, checked again (common/run.h), the output poisoned before each check.
  ladder::Phase kernel;
  kernel.name = "kernel";
  kernel.stream = stream;
  kernel.run = [&] { launch(res.device, d_in.get(), d_out.get(), rows, cols, stream); };
  kernel.poison = [&] { d_out.poison(stream); };
  kernel.check = [&] {
    CUDA_CHECK(cudaMemcpy(h_out.get(), d_out.get(), bytes, cudaMemcpyDeviceToHost));
    return ladder::verify_exact(h_out.get(), copies ? h_in.get() : ref.get(), n, out_shape);
  };
  res.kernel = ladder::measure_phase(res, kernel, opt, [&] {
    if (opt.dump_dir.empty()) return;
    ladder::write_npy(opt.dump_dir, "in", h_in.get(), {rows, cols});
    ladder::write_npy(opt.dump_dir, "out", h_out.get(), out_shape);
  });
  res.metric_value = ladder::gbps(min_bytes(rows, cols), res.kernel.median);
  res.min_bytes = min_bytes(rows, cols);  // no arithmetic: flops stay 0

  // Step 5: the copy engine's D2D copy of the same bytes, on the same buffers, timed the same way
  // (the ceiling step always; every step when the ceiling is measured). The ceiling's kernels run
  // on the step's own bytes (at least 2 MiB), but they are tuned streaming copies; a matrix whose
  // input and output fit in the L2 together is partly served from it between repetitions, and a
  // kernel of a few microseconds pays its launch and its last wave in full: this copy, on the
  // step's own buffers, has both, and is the fair scale at such sizes.
  if (copies || opt.ceiling) {
    ladder::NvtxRange r("cudaMemcpy D2D, same bytes");
    ladder::Stats m = ladder::time_gpu([&] {
      CUDA_CHECK(cudaMemcpyAsync(d_out.get(), d_in.get(), bytes, cudaMemcpyDeviceToDevice, stream));
    }, stream, plan);
    const double copy_gbps = ladder::gbps(min_bytes(rows, cols), m.median);
    res.extras.push_back({"memcpy_d2d_ms", m.median, "ms (cudaMemcpy device-to-device, same bytes)"});
    res.extras.push_back({"memcpy_d2d_gbps", copy_gbps, "GB/s (cudaMemcpy device-to-device, same bytes)"});
    res.extras.push_back({"pct_of_memcpy_same_bytes", 100.0 * res.metric_value / copy_gbps,
                          "% (this step's GB/s over that copy's)"});
  }
  if (shape[0] != '\0') res.notes.push_back(shape);
  if (!variants.empty()) {
    std::string all;
    for (const std::string& v : variants) all += (all.empty() ? "" : " ") + v;
    res.notes.push_back("variant " + variant + " (--variant: " + all + ")");
  }
  return ladder::finish(res, opt);
}

}  // namespace transpose
