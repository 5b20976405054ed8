// vector_add step 08: unified (managed) memory, with and without prefetching.
// cudaMallocManaged returns one pointer valid on host and device; the driver migrates 4 KB-2 MB
// pages to whichever processor touches them. Left to itself, the kernel's first touch of each page
// is a GPU page fault: the SM stalls, the fault is serviced, the page crosses PCIe, the access
// replays — thousands of small transfers instead of a few large ones (the harness reports this as
// kernel_ms_page_faulting). cudaMemPrefetchAsync moves whole ranges ahead of use, far faster than
// faulting, though still well below a pinned copy: the end-to-end path below has step 05's shape,
// written without explicit copies, and lands between step 04's time and step 05's.
// Changes from step 05: no separate device buffers and no cudaMemcpy; the kernel is step 04's.
// Costs: fault-driven migration is many times slower than a copy; managed memory must never be
// oversubscribed, which can hang the GPU rather than fail (the harness checks it against free
// device memory first).
// Source: "CUDA编程入门", the unified memory section (cudaMallocManaged).
// Run: build/bin/vector_add_08_unified_memory
#include "04_grid_stride.cu"  // add_grid_stride and its launcher

namespace vector_add::unified_memory {

void prefetch_end_to_end(const ladder::DeviceInfo& dev, Arrays host, Arrays, int64_t n,
                         LaunchFn launch, Streams streams) {
  const size_t bytes = ladder::bytes_of<float>(n);
  cudaStream_t s = streams.s[0];
  // Step 1: inputs (and the output's pages) to the GPU in bulk. Step 2: the kernel, fault-free.
  // Step 3: the result back to the host in bulk, so reading it there faults nothing.
  for (float* p : {host.x, host.y, host.r}) ladder::prefetch_managed(p, bytes, dev.index, s);
  if (launch) launch(dev, host, n, s);  // managed: the host pointers are the device pointers
  ladder::prefetch_managed(host.r, bytes, ladder::kHostLocation, s);
  CUDA_CHECK(cudaStreamSynchronize(s));
}

const Step kStep{"vector_add/08_unified_memory", grid_stride::launch, Runs::on_gpu,
                 ladder::HostKind::managed, prefetch_end_to_end};
LADDER_STEP(kStep);

}  // namespace vector_add::unified_memory
