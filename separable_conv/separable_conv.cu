// The separable_conv harness: everything a step of this folder does not change — the flags, the
// inputs, the fp64 reference and its bound, poisoning, checking, timing, the host<->device copies
// of the steps that own them, the single-pass floor, the report.
#include "separable_conv/separable_conv.cuh"

#include "common/buffers.h"
#include "common/cli.h"
#include "common/npy.h"
#include "common/nvtx.h"
#include "common/random.h"
#include "common/report.h"
#include "common/run.h"
#include "common/timing.h"
#include "common/verify.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace separable_conv {

void reference_convolution(const float* in, const float* row_taps, const float* col_taps,
                           int64_t width, int64_t height, int taps, double* ref, double* magnitude) {
  const int64_t r = taps / 2;
  const int64_t n = width * height;
  std::vector<double> rows(n), rows_abs(n);  // the row pass and its magnitudes, in fp64
  // Row pass: only the taps that meet the image (the rest multiply zeros).
#pragma omp parallel for schedule(static)
  for (int64_t y = 0; y < height; ++y)
    for (int64_t x = 0; x < width; ++x) {
      const int64_t i_lo = std::max<int64_t>(0, r - x), i_hi = std::min<int64_t>(taps, width - x + r);
      const float* src = in + y * width + x - r;
      double s = 0, a = 0;
      for (int64_t i = i_lo; i < i_hi; ++i) {
        s += static_cast<double>(row_taps[i]) * src[i];
        a += std::fabs(static_cast<double>(row_taps[i])) * std::fabs(static_cast<double>(src[i]));
      }
      rows[y * width + x] = s;
      rows_abs[y * width + x] = a;
    }
  // Column pass: output row y adds the rows y - R .. y + R that exist, a whole row at a time.
#pragma omp parallel for schedule(static)
  for (int64_t y = 0; y < height; ++y) {
    double* o = ref + y * width;
    double* m = magnitude + y * width;
    std::fill(o, o + width, 0.0);
    std::fill(m, m + width, 0.0);
    const int64_t j_lo = std::max<int64_t>(0, r - y), j_hi = std::min<int64_t>(taps, height - y + r);
    for (int64_t j = j_lo; j < j_hi; ++j) {
      const double t = col_taps[j], t_abs = std::fabs(t);
      const double* src = rows.data() + (y + j - r) * width;
      const double* src_abs = rows_abs.data() + (y + j - r) * width;
      for (int64_t x = 0; x < width; ++x) {
        o[x] += t * src[x];
        m[x] += t_abs * src_abs[x];
      }
    }
  }
}

size_t pick_most_resident(const ladder::DeviceInfo& dev, const std::vector<Candidate>& candidates,
                          const std::string& what, std::string* why) {
  size_t best = candidates.size(), smallest = 0;
  int best_warps = 0, fitting = 0, best_blocks = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (c.smem < candidates[smallest].smem) smallest = i;
    if (c.smem > dev.smem_per_block_optin) continue;
    // ladder::blocks_per_sm raises the kernel's opt-in itself; require_shared_memory is for the
    // kernel that launches (it reports that one's shared memory in the record).
    const int blocks = ladder::blocks_per_sm(dev, c.kernel, c.threads, c.smem);
    if (blocks < 1) continue;
    ++fitting;
    const int warps = blocks * (c.threads / 32);
    if (warps > best_warps) {
      best = i;
      best_warps = warps;
      best_blocks = blocks;
    }
  }
  if (best == candidates.size()) {
    const Candidate& c = candidates[smallest];
    ladder::refuse_shared_memory(what + " (its smallest tile, " + c.name + ")", c.smem, dev);
  }
  const Candidate& c = candidates[best];
  *why = c.name + ": " + std::to_string(best_warps) + " resident warps per SM (" + std::to_string(best_blocks) +
         (best_blocks == 1 ? " block x " : " blocks x ") + std::to_string(c.threads / 32) + " warps, " + std::to_string(c.smem) +
         " B of shared memory each), the most of the " + std::to_string(fitting) + " of " +
         std::to_string(candidates.size()) + " candidates that fit (ties: the first listed)";
  return best;
}

namespace {

std::vector<std::string> words(const char* list) {
  std::istringstream s(list ? list : "");
  std::vector<std::string> w;
  for (std::string t; s >> t;) w.push_back(t);
  return w;
}

const char* transfers_name(Transfers t) {
  switch (t) {
    case Transfers::none: return "none";
    case Transfers::pageable: return "pageable (malloc)";
    case Transfers::pinned: return "pinned (cudaMallocHost)";
  }
  return "?";
}

}  // namespace

int run(const Step& step, int argc, char** argv) {
  const ladder::StepInfo info = ladder::StepInfo::from_id(step.id);
  int64_t width = kDefaultWidth, height = kDefaultHeight, taps = kDefaultTaps;
  ladder::Cli cli("separable_conv_" + info.name,
                  "out = column pass (row pass (in)), float, zero-padded borders, output the size "
                  "of the input (" + info.id + ")");
  cli.add_size("width", &width, "image width in pixels");
  cli.add_size("height", &height, "image height in pixels");
  cli.add_size("taps", &taps, "taps per pass K: odd, 1 to " + std::to_string(kMaxTaps));
  std::vector<std::string> tiles = words(step.tiles);
  std::string tile = tiles.empty() ? "" : "auto";
  if (!tiles.empty()) {
    tiles.insert(tiles.begin(), "auto");
    cli.add_choice("tile", &tile, tiles, "this step's tile shape (tuning; auto: the step's rule for this GPU, "
                                         "printed as `choice`)");
  }
  if (!cli.parse(argc, argv)) return ladder::kExitOk;
  const ladder::CommonOptions& opt = cli.common;
  // The taps are checked whether or not a device is present: an even K is a usage error everywhere.
  if (taps % 2 == 0)
    throw ladder::UsageError("--taps must be odd (a centred kernel), got " + std::to_string(taps));
  if (taps > kMaxTaps)
    throw ladder::UsageError("--taps " + std::to_string(taps) + " is more than the " +
                             std::to_string(kMaxTaps) + " taps this folder supports");
  const int k = static_cast<int>(taps);
  const bool on_gpu = step.runs == Runs::on_gpu;
  const bool owns_transfers = step.transfers != Transfers::none;

  ladder::Result res;
  res.step = info;
  res.device = on_gpu ? ladder::init_device(opt) : ladder::init_device_if_present(opt);
  res.size = {{"width", width}, {"height", height}, {"taps", taps}};
  res.metric_unit = "GPix/s";
  res.verify_skipped = !opt.verify;
  ladder::NvtxRange step_range(info.id);
  const std::string what = info.id + " at " + std::to_string(width) + " x " + std::to_string(height) +
                           ", " + std::to_string(k) + " taps";

  // Step 1: sizes, checked before any product is used, and the memory guard before anything is
  // allocated. Host: input and result (pinned for 02), and when verifying the reference, its
  // magnitudes and its two fp64 scratch images; the CPU step's intermediate. Device: input,
  // output, the intermediate of a two-pass step, the taps.
  const int64_t n = ladder::checked_count({height, width}, sizeof(double));
  const size_t img = ladder::bytes_of<float>(n), img64 = ladder::bytes_of<double>(n);
  const size_t taps_bytes = ladder::bytes_of<float>(2 * taps);
  ladder::MemoryNeeds needs;
  (step.transfers == Transfers::pinned ? needs.pinned : needs.host) += 2 * img + taps_bytes;
  if (opt.verify) needs.host += 4 * img64;
  if (on_gpu) needs.device = (step.intermediate ? 3 : 2) * img + taps_bytes;
  else needs.host += img;
  ladder::require_memory(needs, what);

  // The ceiling first, on its own buffers (freed again), before this step's buffers exist: the
  // roofline of the problem. A pixel must be read once and written once (8 bytes at the copy
  // ceiling: the single-pass floor) and needs 2K FMAs (K per pass, at the measured FMA rate); the
  // larger of the two times is the floor, so a long kernel (K >= 63 on an H100) is judged against
  // arithmetic, a short one against bandwidth.
  const ladder::TimingPlan plan = ladder::TimingPlan::from(opt);
  res.min_bytes = min_bytes(width, height);
  res.flops = 4.0 * static_cast<double>(k) * static_cast<double>(n);  // 2K FMAs per pixel
  res.compute = "fp32";
  if (opt.ceiling && res.device.present) {
    const ladder::Ceiling copy = ladder::measure_copy_ceiling(res.device, plan, 4.0 * double(n), 4.0 * double(n));
    const ladder::Ceiling fma = ladder::measure_fma_ceiling(res.device, plan);
    const double bandwidth_gpix = copy.value / 8.0, fma_gpix = fma.value / (4.0 * k);
    ladder::Ceiling floor;
    floor.name = bandwidth_gpix <= fma_gpix ? "roofline: single-pass floor (" + copy.name + " / 8 B per pixel)"
                                            : "roofline: FMA floor (" + fma.name + " / " + std::to_string(2 * k) + " FMAs per pixel)";
    floor.unit = "GPix/s";
    floor.value = std::min(bandwidth_gpix, fma_gpix);
    floor.detail = copy.detail + "; " + fma.detail;
    res.ceiling = floor;
    res.extras.push_back({"fma_ceiling_gflops", fma.value, "GFLOP/s, the FMA rate measured in this process"});
    res.extras.push_back({"fma_floor_gpix_s", fma_gpix, "GPix/s (2K FMAs per pixel at the measured FMA rate)"});
    res.extras.push_back({"copy_ceiling_gbps", copy.value, "GB/s, the copy ceiling in this process"});
    res.extras.push_back({"single_pass_floor_gpix_s", copy.value / 8.0,
                          "GPix/s (8 B per pixel at copy speed: read once, write once)"});
    res.extras.push_back({"two_pass_floor_gpix_s", copy.value / 16.0,
                          "GPix/s (16 B per pixel: the intermediate image written and read back)"});
  }

  // Step 2: inputs and reference. Image and taps uniform in [-1, 1): signed taps make outputs
  // cancel, which the magnitude bound is built for.
  const ladder::HostKind kind =
      step.transfers == Transfers::pinned ? ladder::HostKind::pinned : ladder::HostKind::pageable;
  ladder::HostBuffer<float> h_in(n, kind), h_out(n, kind), h_taps(2 * taps, kind), h_tmp;
  ladder::HostBuffer<double> ref, mag;
  const float* h_row_taps = h_taps.get();
  const float* h_col_taps = h_taps.get() + taps;
  {
    ladder::NvtxRange r("inputs and reference");
    ladder::fill_uniform(h_in.get(), n, opt.seed, 1, -1.f, 1.f);
    ladder::fill_uniform(h_taps.get(), taps, opt.seed, 2, -1.f, 1.f);
    ladder::fill_uniform(h_taps.get() + taps, taps, opt.seed, 3, -1.f, 1.f);
    if (opt.verify) {
      ref = ladder::HostBuffer<double>(n);
      mag = ladder::HostBuffer<double>(n);
      reference_convolution(h_in.get(), h_row_taps, h_col_taps, width, height, k, ref.get(), mag.get());
    }
  }
  const ladder::ErrorBound bound = error_bound(k);
  auto check_result = [&] {
    return ladder::verify_bounded(h_out.get(), ref.get(), mag.get(), n, bound, {height, width});
  };
  auto dump = [&] {
    if (opt.dump_dir.empty()) return;
    ladder::write_npy(opt.dump_dir, "in", h_in.get(), {height, width});
    ladder::write_npy(opt.dump_dir, "row_taps", h_row_taps, {taps});
    ladder::write_npy(opt.dump_dir, "col_taps", h_col_taps, {taps});
    ladder::write_npy(opt.dump_dir, "out", h_out.get(), {height, width});
  };
  auto gpix_per_s = [&](double ms) { return static_cast<double>(n) / (ms * 1e-3) / 1e9; };

  if (!on_gpu) {
    // The CPU step: its two passes are the "kernel", on host memory, timed on the host clock.
    h_tmp = ladder::HostBuffer<float>(n);
    Args a{&res.device, h_in.get(), h_tmp.get(), h_out.get(), h_row_taps, h_col_taps,
           width, height, k, tile, nullptr, &res.choice};
    ladder::Phase loops;
    loops.name = "CPU passes";
    loops.clock = ladder::Clock::host;
    loops.run = [&] { step.launch(a); };
    loops.poison = [&] {
      std::memset(h_tmp.get(), 0xFF, img);
      std::memset(h_out.get(), 0xFF, img);
    };
    loops.check = check_result;
    res.kernel = ladder::measure_phase(res, loops, opt, dump);
    res.metric_value = gpix_per_s(res.kernel.median);
    res.notes.push_back("row pass, then column pass, OpenMP over rows; the floor is the GPU's, for scale");
    return ladder::finish(res, opt);
  }

  // Step 3: device buffers; the image and the taps go over once (the transfer steps time their
  // copies again below). A step with taps of its own (constant memory) copies them there.
  ladder::Stream stream;
  cudaStream_t s = stream.get();
  ladder::DeviceBuffer<float> d_in(n), d_out(n), d_tmp(step.intermediate ? n : 0), d_taps(2 * taps);
  Args a{&res.device, d_in.get(), d_tmp.get(), d_out.get(), d_taps.get(), d_taps.get() + taps,
         width, height, k, tile, s, &res.choice};
  auto upload = [&] {
    CUDA_CHECK(cudaMemcpyAsync(d_in.get(), h_in.get(), img, cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaMemcpyAsync(d_taps.get(), h_taps.get(), taps_bytes, cudaMemcpyHostToDevice, s));
    if (step.load_taps) step.load_taps(a);
  };
  upload();
  CUDA_CHECK(cudaStreamSynchronize(s));

  // Step 4: the kernels alone, inputs resident — checked, timed, checked again (common/run.h),
  // with the output and the intermediate poisoned (NaN) before each check.
  auto poison_device = [&] {
    d_out.poison(s);
    d_tmp.poison(s);
    CUDA_CHECK(cudaStreamSynchronize(s));
  };
  ladder::Phase kernel;
  kernel.name = step.intermediate ? "row and column pass" : "fused pass";
  kernel.stream = s;
  kernel.run = [&] { step.launch(a); };
  kernel.poison = poison_device;
  kernel.check = [&] {
    CUDA_CHECK(cudaMemcpy(h_out.get(), d_out.get(), img, cudaMemcpyDeviceToHost));
    return check_result();
  };
  res.kernel = ladder::measure_phase(res, kernel, opt, dump);
  res.metric_value = gpix_per_s(res.kernel.median);

  // Step 5: the steps that own their transfers, end to end: image and taps in, both passes, the
  // result out, on the host clock; then the same copies without the kernels (the transfer floor).
  if (owns_transfers) {
    auto end_to_end = [&](bool with_kernels) {
      CUDA_CHECK(cudaMemcpyAsync(d_in.get(), h_in.get(), img, cudaMemcpyHostToDevice, s));
      CUDA_CHECK(cudaMemcpyAsync(d_taps.get(), h_taps.get(), taps_bytes, cudaMemcpyHostToDevice, s));
      if (with_kernels) {
        if (step.load_taps) step.load_taps(a);
        step.launch(a);
      }
      CUDA_CHECK(cudaMemcpyAsync(h_out.get(), d_out.get(), img, cudaMemcpyDeviceToHost, s));
      CUDA_CHECK(cudaStreamSynchronize(s));
    };
    ladder::Phase e2e;
    e2e.name = "end-to-end";
    e2e.clock = ladder::Clock::host;
    e2e.run = [&] { end_to_end(true); };
    e2e.poison = [&] {
      poison_device();
      std::memset(h_out.get(), 0xFF, img);
    };
    e2e.check = check_result;
    res.total = ladder::measure_phase(res, e2e, opt);
    res.extras.push_back({"end_to_end_gpix_s", gpix_per_s(res.total->median),
                          "GPix/s host to host (image in, both passes, result out)"});
    if (opt.ceiling) {
      ladder::NvtxRange r("ceiling: transfer floor");
      ladder::Stats copies = ladder::time_host([&] { end_to_end(false); }, plan);
      res.extras.push_back({"transfer_floor_ms", copies.median, "ms (the same copies, no kernels)"});
      res.extras.push_back({"transfer_floor_gbps", ladder::gbps(2.0 * img, copies.median),
                            "GB/s (image in and result out, " + std::string(transfers_name(step.transfers)) + ")"});
    }
    res.notes.push_back(std::string("host buffers: ") + transfers_name(step.transfers) +
                        "; total_ms = image and taps in, both passes, result out");
  }
  res.extras.push_back({"effective_gbps", ladder::gbps(min_bytes(width, height), res.kernel.median),
                        "GB/s (8 B per pixel over the kernel time)"});
  if (step.shape[0] != '\0') res.notes.push_back(step.shape);
  if (!tile.empty()) res.notes.push_back("--tile " + tile + " (candidates: " + step.tiles + ")");
  return ladder::finish(res, opt);
}

}  // namespace separable_conv
