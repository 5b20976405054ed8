// vector_add step 09: zero-copy — the kernel reads and writes mapped pinned host memory directly.
// cudaHostAlloc(..., cudaHostAllocMapped) pins host memory and maps it into the device's address
// space; cudaHostGetDevicePointer gives the address a kernel uses. There is no copy at all: every
// load the kernel issues crosses PCIe as a small read request, and every store as a write. For data
// touched once (like here) that can match copy-then-compute, since the bytes cross the bus once
// either way; for data read twice it loses badly, and the kernel runs at PCIe speed, not HBM speed.
// Changes from step 05: no device buffers and no cudaMemcpy; kernel time is the end-to-end time.
// Costs: PCIe speed (~73 GB/s in the chapter's H100 run) instead of ~2.7 TB/s for every access;
// pinned memory as in step 05.
// Source: "CUDA编程入门", the zero-copy (零拷贝) section. Run: build/bin/vector_add_09_zero_copy
#include "04_grid_stride.cu"  // add_grid_stride and its launcher

namespace vector_add::zero_copy {

void mapped_end_to_end(const ladder::DeviceInfo& dev, Arrays host, Arrays, int64_t n, LaunchFn launch,
                       Streams streams) {
  cudaStream_t s = streams.s[0];
  // The device's names for the host's pages (equal to the host pointers under unified addressing).
  Arrays mapped{};
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped.x), host.x, 0));
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped.y), host.y, 0));
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped.r), host.r, 0));
  if (launch) launch(dev, mapped, n, s);
  CUDA_CHECK(cudaStreamSynchronize(s));  // after this the host sees every store
}

const Step kStep{"vector_add/09_zero_copy", grid_stride::launch, Runs::on_gpu, ladder::HostKind::mapped,
                 mapped_end_to_end};
LADDER_STEP(kStep);

}  // namespace vector_add::zero_copy
