// The reduction harness: everything a step of this folder does not change — the flags, the input,
// the reference, the grid of the block-partials steps, restoring the in-place input, the host
// finish, poisoning, checking, timing, and the CUB ceiling.
#include "reduction/reduction.cuh"

#include "common/cli.h"
#include "common/npy.h"
#include "common/nvtx.h"
#include "common/random.h"
#include "common/report.h"
#include "common/run.h"
#include "common/timing.h"
#include "common/verify.h"

#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cstdint>
#include <cuda/std/functional>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace reduction {

int64_t reference_sum(const int32_t* x, int64_t n) {
  int64_t sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  return sum;
}

// cub::DeviceReduce::Sum takes its initial value, and with it the accumulator, from the OUTPUT type:
// InitT = int64_t (the output iterator's value type) and AccumT = decltype(plus(InitT, InputT)).
// With an int64 output every partial inside CUB is int64 and cannot overflow; with an int32 output
// it would accumulate in int32 and wrap at 2^28 values of 255.
static_assert(std::is_same_v<decltype(cuda::std::plus<>{}(int64_t{0}, int{0})), int64_t>,
              "CUB accumulates int32 inputs into an int64 output in int64");
// CUB before 2.2 (CUDA 12.2 and older: 12.2 ships CUB 2.1) takes `int num_items`: n = 2^31 + 7
// would wrap. There the sum runs in chunks of at most 2^30 items, each into an int64 partial at the
// start of the workspace, and a second pass adds the partials; with CUB 2.2 and later it is one call.
// LADDER_CUB_CHUNK (a compile definition) forces the chunked path on any CUB, to test it.
#if defined(LADDER_CUB_CHUNK)
constexpr int64_t kCubChunk = LADDER_CUB_CHUNK;
#elif CUB_VERSION >= 200200
constexpr int64_t kCubChunk = INT64_MAX;
#else
constexpr int64_t kCubChunk = int64_t(1) << 30;
#endif

namespace {

int64_t cub_chunks(int64_t n) { return n <= kCubChunk ? 1 : (n + kCubChunk - 1) / kCubChunk; }

// Bytes for the chunk partials at the workspace's start (none for one chunk), 256-byte aligned.
size_t partials_bytes(int64_t n) {
  const int64_t chunks = cub_chunks(n);
  return chunks == 1 ? 0 : (chunks * sizeof(int64_t) + 255) / 256 * 256;
}

}  // namespace

size_t cub_temp_bytes(int64_t n) {
  size_t bytes = 0, second = 0;
  CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, static_cast<const int*>(nullptr),
                                    static_cast<int64_t*>(nullptr), std::min(n, kCubChunk)));
  if (cub_chunks(n) > 1)
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, second, static_cast<const int64_t*>(nullptr),
                                      static_cast<int64_t*>(nullptr), static_cast<int>(cub_chunks(n))));
  return partials_bytes(n) + std::max(bytes, second);
}

void cub_sum(const int* data, int64_t n, int64_t* total, void* temp, size_t temp_bytes,
             cudaStream_t stream) {
  const int64_t chunks = cub_chunks(n);
  if (chunks == 1) {
    CUDA_CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, data, total, n, stream));
    return;
  }
  auto* partials = static_cast<int64_t*>(temp);
  void* rest = static_cast<char*>(temp) + partials_bytes(n);
  size_t rest_bytes = temp_bytes - partials_bytes(n);
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t first = c * kCubChunk, count = std::min(kCubChunk, n - first);
    CUDA_CHECK(cub::DeviceReduce::Sum(rest, rest_bytes, data + first, partials + c, count, stream));
  }
  CUDA_CHECK(cub::DeviceReduce::Sum(rest, rest_bytes, partials, total, static_cast<int>(chunks), stream));
}

namespace {

// The posts' host finish, as a host function enqueued on the timed stream after the partials' D2H
// copy: the stream (and the stop event behind it) waits until the total exists on the host.
struct HostFinish {
  const int* partials = nullptr;  // pinned
  int64_t count = 0;
  int64_t total = -1;
};

void CUDART_CB sum_partials_on_host(void* p) {
  auto* f = static_cast<HostFinish*>(p);
  int64_t sum = 0;
  for (int64_t i = 0; i < f->count; ++i) sum += f->partials[i];
  f->total = sum;
}

}  // namespace

int run(const Step& step, int argc, char** argv) {
  const ladder::StepInfo info = ladder::StepInfo::from_id(step.id);
  int64_t n = kDefaultN;
  ladder::Cli cli(std::string("reduction_") + info.name,
                  "int64 sum of n int32 values in 0.." + std::to_string(kMaxValue) + " (" + info.id + ")");
  cli.add_size("n", &n, "number of int32 values");
  if (!cli.parse(argc, argv)) return ladder::kExitOk;
  const ladder::CommonOptions& opt = cli.common;
  const bool host_finish = step.partials != nullptr;

  ladder::Result res;
  res.step = info;
  res.device = ladder::init_device(opt);
  res.size = {{"n", n}};
  res.metric_unit = "GB/s";
  res.verify_skipped = !opt.verify;
  ladder::NvtxRange step_range(info.id);
  const std::string what = info.id + " at n=" + std::to_string(n);

  // Step 1: the shape of the run. Block-partials steps: one int32 partial per `values_per_block`
  // values, which must not overflow (the step's static_assert says so too; this guards the harness
  // against a Step built with other numbers).
  ladder::MemoryNeeds needs;
  const size_t bytes = ladder::bytes_of<int>(n);
  needs.device = bytes;
  needs.host = bytes;
  // The input alone must fit before a step or CUB is asked for its workspace size: CUB's size query
  // itself dies (an integer division by zero) on counts no device could hold.
  ladder::require_memory(needs, what);
  BlockGrid grid{};
  int64_t partial_count = 0;
  size_t workspace_bytes = 0;
  if (host_finish) {
    const int64_t per_block = int64_t(step.threads) * step.data_blocks;
    if (step.threads <= 0 || step.data_blocks <= 0 || !fits_int32_partial(per_block))
      throw std::logic_error(info.id + ": int32 partials of " + std::to_string(per_block) +
                             " values in 0.." + std::to_string(kMaxValue) + " could overflow");
    partial_count = (n + per_block - 1) / per_block;
    grid = {0, step.threads, per_block};
    needs.device = 2 * bytes + ladder::bytes_of<int>(partial_count);  // input, pristine copy, partials
    needs.pinned = ladder::bytes_of<int>(partial_count);
  } else {
    workspace_bytes = step.workspace_bytes ? step.workspace_bytes(res.device, n) : 0;
    needs.device = bytes + sizeof(int64_t) + workspace_bytes;
  }
  const size_t ceiling_bytes = opt.ceiling ? cub_temp_bytes(n) : 0;
  if (opt.ceiling) needs.device += ceiling_bytes + sizeof(int64_t);
  needs.host = bytes;
  ladder::require_memory(needs, what);
  if (host_finish) {
    if (partial_count > INT32_MAX)  // gridDim.x limit; unreachable on today's memory sizes
      throw ladder::UsageError(what + ": " + std::to_string(partial_count) +
                               " thread blocks exceed the grid limit of 2^31-1");
    grid.blocks = static_cast<unsigned>(partial_count);
  }

  // Step 2: the input and the reference.
  ladder::HostBuffer<int32_t> input(n);
  int64_t want = 0;
  {
    ladder::NvtxRange r("input and reference");
    ladder::fill_uniform_int(input.get(), n, opt.seed, 1, 0, kMaxValue);
    want = reference_sum(input.get(), n);
  }

  // Step 3: device buffers. In-place steps overwrite `data`; `pristine` restores it before each run.
  ladder::Stream stream;
  cudaStream_t s = stream.get();
  ladder::DeviceBuffer<int> data(n), pristine(host_finish ? n : 0), partials(partial_count);
  ladder::HostBuffer<int> host_partials(partial_count, ladder::HostKind::pinned);
  ladder::DeviceBuffer<int64_t> total(1);
  ladder::DeviceBuffer<unsigned char> workspace(static_cast<int64_t>(workspace_bytes));
  // All on the step's stream, then wait: a plain cudaMemcpy D2D or cudaMemset returns before the
  // device has finished, and `pristine` and the workspace must be complete before first use.
  CUDA_CHECK(cudaMemcpyAsync(data.get(), input.get(), bytes, cudaMemcpyHostToDevice, s));
  if (host_finish)
    CUDA_CHECK(cudaMemcpyAsync(pristine.get(), data.get(), bytes, cudaMemcpyDeviceToDevice, s));
  if (workspace_bytes) CUDA_CHECK(cudaMemsetAsync(workspace.get(), 0, workspace_bytes, s));
  CUDA_CHECK(cudaStreamSynchronize(s));

  HostFinish finish{host_partials.get(), partial_count, -1};
  auto restore = [&] {
    if (!host_finish) return;  // device-total steps only read their input
    CUDA_CHECK(cudaMemcpyAsync(data.get(), pristine.get(), bytes, cudaMemcpyDeviceToDevice, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
  };
  auto launch = [&] {
    if (host_finish) step.partials(data.get(), n, partials.get(), grid, s);
    else step.total(res.device, data.get(), n, total.get(), {workspace.get(), workspace_bytes}, s);
  };
  auto check = [&](int64_t got) { return ladder::verify_exact(&got, &want, 1, {1}); };
  auto dump = [&](int64_t got) {
    if (opt.dump_dir.empty()) return;
    ladder::write_npy(opt.dump_dir, "in", input.get(), {n});
    ladder::write_npy(opt.dump_dir, "sum", &got, {1});
  };

  // Step 4: the kernel(s) alone — checked, timed, checked again (common/run.h). In-place steps get
  // their input restored before every run, outside the timed region. A host-finish step's kernel
  // is checked by adding its partials here, untimed.
  ladder::Phase kernel;
  kernel.name = "kernel";
  kernel.stream = s;
  kernel.run = launch;
  if (host_finish) kernel.prepare = restore;
  kernel.poison = [&] {
    if (host_finish) partials.poison(s);  // every int32 partial -1: one the kernel skips shows
    else total.poison(s);
    CUDA_CHECK(cudaStreamSynchronize(s));
  };
  int64_t kernel_total = -1;
  kernel.check = [&] {
    if (host_finish) {
      CUDA_CHECK(cudaMemcpy(host_partials.get(), partials.get(), partials.bytes(), cudaMemcpyDeviceToHost));
      sum_partials_on_host(&finish);
      kernel_total = finish.total;
    } else {
      CUDA_CHECK(cudaMemcpy(&kernel_total, total.get(), sizeof kernel_total, cudaMemcpyDeviceToHost));
    }
    return check(kernel_total);
  };
  res.kernel = ladder::measure_phase(res, kernel, opt, [&] { dump(kernel_total); });

  // Step 5: the posts' whole path for host-finish steps — kernel, partials to the host, host loop —
  // timed until the int64 total exists: total_ms, which the metric and the ceiling compare.
  if (host_finish) {
    ladder::Phase to_total;
    to_total.name = "until the total exists on the host";
    to_total.stream = s;
    to_total.clock = ladder::Clock::events;  // the host loop runs on the stream: no GPU record covers it
    to_total.prepare = restore;
    to_total.run = [&] {
      launch();
      CUDA_CHECK(cudaMemcpyAsync(host_partials.get(), partials.get(), partials.bytes(),
                                 cudaMemcpyDeviceToHost, s));
      CUDA_CHECK(cudaLaunchHostFunc(s, sum_partials_on_host, &finish));
    };
    to_total.poison = [&] {
      partials.poison(s);
      CUDA_CHECK(cudaStreamSynchronize(s));
      std::memset(host_partials.get(), 0xFF, host_partials.bytes());
      finish.total = -1;
    };
    to_total.check = [&] { return check(finish.total); };
    res.total = ladder::measure_phase(res, to_total, opt);
    res.total_what = "until the sum exists on the host (kernel, partials copied back, host loop)";
    res.metric_from = "total_ms";
    res.metric_value = ladder::gbps(min_bytes(n), res.total->median);
    res.min_bytes = min_bytes(n);
    res.flops = static_cast<double>(n);  // integer adds, counted as operations
    res.extras.push_back({"kernel_gbps", ladder::gbps(min_bytes(n), res.kernel.median),
                          "GB/s (the kernel alone, without the host finish)"});
    res.extras.push_back({"partials", static_cast<double>(partial_count),
                          "int32 partials summed on the host"});
    res.notes.push_back("in place in global memory, input restored between runs (untimed); "
                        "finish on the host (partials D2H + host loop): total_ms");
  } else {
    res.metric_value = ladder::gbps(min_bytes(n), res.kernel.median);
    res.min_bytes = min_bytes(n);
    res.flops = static_cast<double>(n);
    res.notes.push_back("input read only; the int64 total is finished on the device");
  }

  // Step 6: the ceiling, cub::DeviceReduce::Sum on the same (restored) input in this process.
  if (opt.ceiling) {
    ladder::NvtxRange r("ceiling: cub::DeviceReduce::Sum");
    restore();
    ladder::DeviceBuffer<unsigned char> temp(static_cast<int64_t>(ceiling_bytes));
    ladder::DeviceBuffer<int64_t> cub_total(1);
    auto cub_once = [&] { cub_sum(data.get(), n, cub_total.get(), temp.get(), ceiling_bytes, s); };
    ladder::Stats cub = ladder::time_gpu(cub_once, s, ladder::TimingPlan::from(opt));
    int64_t cub_got = -1;
    CUDA_CHECK(cudaMemcpy(&cub_got, cub_total.get(), sizeof cub_got, cudaMemcpyDeviceToHost));
    ladder::require_correct_ceiling(check(cub_got), "cub::DeviceReduce::Sum");
    ladder::Ceiling c;
    c.name = "cub::DeviceReduce::Sum int32->int64";
    c.unit = "GB/s";
    c.value = ladder::gbps(min_bytes(n), cub.median);
    char detail[96];
    std::snprintf(detail, sizeof detail, "%.4f ms median of %d reps, same input", cub.median, cub.reps);
    c.detail = detail;
    res.ceiling = c;
    res.extras.push_back({"ceiling_ms", cub.median, "ms (CUB on the same input)"});
  }
  return ladder::finish(res, opt);
}

}  // namespace reduction
