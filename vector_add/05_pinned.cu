// vector_add step 05: pinned (page-locked) host buffers; the kernel is step 04's, unchanged.
// The GPU's copy engines move data by DMA, and DMA needs physical pages that cannot move. From
// pageable malloc memory the driver must first copy each piece into a pinned staging buffer, then
// DMA it — two copies, one of them by the CPU. cudaMallocHost hands us memory that is already
// pinned, so the copy engine reads it directly: the transfers speed up, the kernel does not change.
// Changes from step 04: host x, y, r come from cudaMallocHost instead of malloc.
// Costs: pinned memory is taken from the OS for good (the harness refuses to pin more than half of
// RAM) and is slow to allocate; allocate it once and reuse it.
// Source: "CUDA编程入门", section 第三次优化(Pinned Memory). Run: build/bin/vector_add_05_pinned
#include "04_grid_stride.cu"  // add_grid_stride and its launcher

namespace vector_add::pinned {

const Step kStep{"vector_add/05_pinned", grid_stride::launch, Runs::on_gpu, ladder::HostKind::pinned};
LADDER_STEP(kStep);

}  // namespace vector_add::pinned
