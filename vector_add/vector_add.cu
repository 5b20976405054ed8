// The vector_add harness: everything a step of this folder does not change.
#include "vector_add/vector_add.cuh"

#include "common/cli.h"
#include "common/npy.h"
#include "common/nvtx.h"
#include "common/random.h"
#include "common/report.h"
#include "common/run.h"
#include "common/timing.h"
#include "common/verify.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace vector_add {

using ladder::HostKind;

void reference_add(const float* x, const float* y, float* r, int64_t n) {
  for (int64_t i = 0; i < n; ++i) r[i] = x[i] + y[i];
}

void copy_in_launch_copy_out(const ladder::DeviceInfo& dev, Arrays host, Arrays device, int64_t n,
                             LaunchFn launch, Streams streams) {
  const size_t bytes = ladder::bytes_of<float>(n);
  cudaStream_t s = streams.s[0];
  CUDA_CHECK(cudaMemcpyAsync(device.x, host.x, bytes, cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaMemcpyAsync(device.y, host.y, bytes, cudaMemcpyHostToDevice, s));
  if (launch) launch(dev, device, n, s);
  CUDA_CHECK(cudaMemcpyAsync(host.r, device.r, bytes, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
}

namespace {

const char* kind_name(HostKind k) {
  switch (k) {
    case HostKind::pageable: return "pageable (malloc)";
    case HostKind::pinned: return "pinned (cudaMallocHost)";
    case HostKind::mapped: return "mapped pinned (cudaHostAlloc, zero-copy)";
    case HostKind::managed: return "managed (cudaMallocManaged)";
  }
  return "?";
}

ladder::MemoryNeeds memory_needs(const Step& step, int64_t n) {
  const size_t arr = ladder::bytes_of<float>(n);
  ladder::MemoryNeeds m;
  m.host = arr;  // the reference
  if (step.runs == Runs::on_cpu) {
    m.host += 3 * arr;
    return m;
  }
  switch (step.host_memory) {
    case HostKind::pageable: m.host += 3 * arr; m.device += 3 * arr; break;
    case HostKind::pinned: m.pinned += 3 * arr; m.device += 3 * arr; break;
    case HostKind::mapped: m.pinned += 3 * arr; break;
    case HostKind::managed: m.managed += 3 * arr; m.host += 2 * arr; break;  // + pristine x, y
  }
  return m;
}

}  // namespace

int run(const Step& step, int argc, char** argv) {
  const ladder::StepInfo info = ladder::StepInfo::from_id(step.id);
  int64_t n = kDefaultN;
  ladder::Cli cli(std::string("vector_add_") + info.name, "r = x + y over n floats (" + info.id + ")");
  cli.add_size("n", &n, "number of elements");
  if (!cli.parse(argc, argv)) return ladder::kExitOk;
  const ladder::CommonOptions& opt = cli.common;
  const bool on_gpu = step.runs == Runs::on_gpu;

  ladder::Result res;
  res.step = info;
  res.device = on_gpu ? ladder::init_device(opt) : ladder::init_device_if_present(opt);
  res.size = {{"n", n}};
  res.metric_unit = "GB/s";
  res.verify_skipped = !opt.verify;
  ladder::NvtxRange step_range(info.id);
  ladder::require_memory(memory_needs(step, n), info.id + " at n=" + std::to_string(n));

  const size_t bytes = ladder::bytes_of<float>(n);
  const ladder::TimingPlan plan = ladder::TimingPlan::from(opt);
  const HostKind kind = on_gpu ? step.host_memory : HostKind::pageable;

  // The ceilings first, on their own buffers (freed again), before the step's memory state exists.
  if (opt.ceiling && res.device.present) {
    res.ceiling = ladder::measure_copy_ceiling(res.device, plan, 8.0 * static_cast<double>(n), 4.0 * static_cast<double>(n));
    if (on_gpu) {
      ladder::TransferBandwidth t = ladder::measure_pinned_transfers(size_t(256) << 20, plan);
      res.extras.push_back({"pinned_h2d_gbps", t.h2d_gbps, "GB/s pinned host->device, 256 MiB"});
      res.extras.push_back({"pinned_d2h_gbps", t.d2h_gbps, "GB/s pinned device->host"});
      res.extras.push_back({"pinned_both_gbps", t.both_gbps, "GB/s both directions at once, in total"});
    }
  }

  // Step 1: inputs and reference. Managed x and y are written from pristine pageable copies so that
  // every end-to-end rep can start with the pages back on the host.
  ladder::HostBuffer<float> hx(n, kind), hy(n, kind), hr(n, kind), ref(n);
  ladder::HostBuffer<float> pristine_x, pristine_y;
  {
    ladder::NvtxRange r("inputs and reference");
    if (kind == HostKind::managed) {
      pristine_x = ladder::HostBuffer<float>(n);
      pristine_y = ladder::HostBuffer<float>(n);
      ladder::fill_uniform(pristine_x.get(), n, opt.seed, 1, -1.f, 1.f);
      ladder::fill_uniform(pristine_y.get(), n, opt.seed, 2, -1.f, 1.f);
      std::memcpy(hx.get(), pristine_x.get(), bytes);
      std::memcpy(hy.get(), pristine_y.get(), bytes);
    } else {
      ladder::fill_uniform(hx.get(), n, opt.seed, 1, -1.f, 1.f);
      ladder::fill_uniform(hy.get(), n, opt.seed, 2, -1.f, 1.f);
    }
    reference_add(hx.get(), hy.get(), ref.get(), n);
  }
  Arrays host{hx.get(), hy.get(), hr.get()};
  auto check_host_result = [&] { return ladder::verify_exact(hr.get(), ref.get(), n, {n}); };
  auto dump = [&] {
    if (opt.dump_dir.empty()) return;
    ladder::write_npy(opt.dump_dir, "x", hx.get(), {n});
    ladder::write_npy(opt.dump_dir, "y", hy.get(), {n});
    ladder::write_npy(opt.dump_dir, "r", hr.get(), {n});
  };

  if (!on_gpu) {
    // The CPU step: its loop is the "kernel"; there is nothing to transfer.
    ladder::Phase loop;
    loop.name = "CPU loop";
    loop.clock = ladder::Clock::host;
    loop.run = [&] { step.launch(res.device, host, n, nullptr); };
    loop.poison = [&] { std::memset(hr.get(), 0xFF, bytes); };
    loop.check = check_host_result;
    res.kernel = ladder::measure_phase(res, loop, opt, dump);
    res.metric_value = ladder::gbps(min_bytes(n), res.kernel.median);
    res.min_bytes = min_bytes(n);
    res.flops = static_cast<double>(n);  // one add per element
    res.notes.push_back("host memory: pageable; the copy ceiling is the GPU's, for scale");
    return ladder::finish(res, opt);
  }

  // Step 2: device-side arrays. Managed memory is its own device array; mapped memory is read
  // through its device alias.
  std::vector<std::unique_ptr<ladder::Stream>> stream_objs;
  std::vector<cudaStream_t> stream_handles;
  for (int i = 0; i < std::max(1, step.streams); ++i) {
    stream_objs.push_back(std::make_unique<ladder::Stream>());
    stream_handles.push_back(stream_objs.back()->get());
  }
  const Streams streams{stream_handles.data(), static_cast<int>(stream_handles.size())};
  cudaStream_t s0 = stream_handles[0];

  ladder::DeviceBuffer<float> dx, dy, dr;
  Arrays device = host;
  if (kind == HostKind::pageable || kind == HostKind::pinned) {
    dx = ladder::DeviceBuffer<float>(n);
    dy = ladder::DeviceBuffer<float>(n);
    dr = ladder::DeviceBuffer<float>(n);
    device = {dx.get(), dy.get(), dr.get()};
  } else if (kind == HostKind::mapped) {
    device = {hx.device_alias(), hy.device_alias(), hr.device_alias()};
  }
  auto launch = [&] { step.launch(res.device, device, n, s0); };

  // Step 3: the kernel alone, inputs resident on the device: checked, timed, checked again.
  // Managed pages go back to the device before every run (reading the result on the host for the
  // check moves r's pages to the host); device arrays are copied in once.
  auto prefetch_to_device = [&] {
    for (float* p : {hx.get(), hy.get(), hr.get()}) ladder::prefetch_managed(p, bytes, res.device.index, s0);
    CUDA_CHECK(cudaStreamSynchronize(s0));
  };
  if (dx.get()) {
    CUDA_CHECK(cudaMemcpyAsync(dx.get(), hx.get(), bytes, cudaMemcpyHostToDevice, s0));
    CUDA_CHECK(cudaMemcpyAsync(dy.get(), hy.get(), bytes, cudaMemcpyHostToDevice, s0));
    CUDA_CHECK(cudaStreamSynchronize(s0));
  }
  ladder::Phase kernel;
  kernel.name = "kernel";
  kernel.stream = s0;
  kernel.run = launch;
  if (kind == HostKind::managed) kernel.prepare = prefetch_to_device;
  kernel.poison = [&] {
    CUDA_CHECK(cudaMemsetAsync(dr.get() ? dr.get() : device.r, 0xFF, bytes, s0));
    CUDA_CHECK(cudaStreamSynchronize(s0));
  };
  kernel.check = [&] {
    if (dr.get()) CUDA_CHECK(cudaMemcpy(hr.get(), dr.get(), bytes, cudaMemcpyDeviceToHost));
    return check_host_result();
  };
  res.kernel = ladder::measure_phase(res, kernel, opt, dump);
  res.metric_value = ladder::gbps(min_bytes(n), res.kernel.median);
  res.min_bytes = min_bytes(n);
  res.flops = static_cast<double>(n);  // one add per element

  // Step 4: end to end, host inputs -> host result, on the host clock. Before every run the
  // managed inputs are rewritten on the host, which moves their pages back there.
  auto pages_on_host = [&] {
    if (kind != HostKind::managed) return;
    std::memcpy(hx.get(), pristine_x.get(), bytes);
    std::memcpy(hy.get(), pristine_y.get(), bytes);
    std::memset(hr.get(), 0xFF, bytes);
  };
  ladder::Phase end_to_end;
  end_to_end.name = "end-to-end";
  end_to_end.clock = ladder::Clock::host;
  end_to_end.run = [&] { step.end_to_end(res.device, host, device, n, step.launch, streams); };
  end_to_end.prepare = pages_on_host;
  end_to_end.poison = [&] {
    if (dr.get()) dr.poison(s0);
    CUDA_CHECK(cudaStreamSynchronize(s0));
    std::memset(hr.get(), 0xFF, bytes);
  };
  end_to_end.check = check_host_result;
  res.total = ladder::measure_phase(res, end_to_end, opt);

  if (kind == HostKind::managed) {
    // What the prefetches buy: the same launch with every page still on the host, so the kernel
    // migrates them on demand, fault by fault.
    ladder::NvtxRange r("kernel: page-faulting");
    ladder::Stats faulting = ladder::time_gpu(launch, s0, plan.after_first_run(res.total->median),
                                              pages_on_host);
    res.extras.push_back({"kernel_ms_page_faulting", faulting.median, "ms (kernel on host-resident pages)"});
  }

  // Step 5: this step's own transfer floor: its end-to-end path with the kernel left out.
  if (opt.ceiling && kind != HostKind::mapped) {
    ladder::NvtxRange r("ceiling: transfer floor");
    auto copies_only = [&] { step.end_to_end(res.device, host, device, n, nullptr, streams); };
    ladder::Stats floor = ladder::time_host(copies_only, plan, pages_on_host);
    res.extras.push_back({"transfer_floor_ms", floor.median, "ms (the same end-to-end path, no kernel)"});
    res.extras.push_back({"end_to_end_pct_of_transfer_floor", 100.0 * res.total->median / floor.median,
                          "% (end-to-end time / transfer floor; 100% = nothing but the copies)"});
  }
  res.notes.push_back(std::string("host memory: ") + kind_name(kind) + ", " +
                      std::to_string(streams.count) + " stream(s)");
  return ladder::finish(res, opt);
}

}  // namespace vector_add
