// vector_add step 00: the CPU loop, the point every GPU step is compared with.
// r[i] = x[i] + y[i] on the host, split over the cores with OpenMP. No device memory, no transfers:
// on the GPU the same sum is cheap but the data must first cross PCIe, which is what the later
// steps' end-to-end times are about.
// Changes: none; this is the baseline the GPU steps are compared with, not a step of the climb.
// Costs: bounded by host memory bandwidth: about 100 GB/s on the H100 machine of the chapter's run,
// a thirtieth of the GPU's HBM3.
// Source: "CUDA编程入门", the CPU version the post starts from. Run: build/bin/vector_add_00_cpu
#include "vector_add/vector_add.cuh"

namespace vector_add::cpu {

// Host arrays in, r complete on return; no device, no stream.
void add_on_cpu(const ladder::DeviceInfo&, Arrays h, int64_t n, cudaStream_t) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) h.r[i] = h.x[i] + h.y[i];
}

const Step kStep{"vector_add/00_cpu", add_on_cpu, Runs::on_cpu};
LADDER_STEP(kStep);

}  // namespace vector_add::cpu
