// Thread block clusters (sm_90): blocks launched in groups that the hardware places on SMs of one
// GPC at the same time; a block may read, write and arrive on the barriers of the other blocks'
// shared memory ("distributed shared memory"), and TMA may write one load into all of them at once
// (multicast). sgemm tf32_04's two-block clusters share each tile of A this way.
//
//   cluster_rank()       %cluster_ctarank: this block's index in its cluster (0 .. size - 1)
//   cluster_sync()       barrier.cluster.arrive.release + wait.acquire, all threads of every block of
//                        the cluster: after it, what each thread did before is visible to all (the
//                        mbarrier inits before a peer may signal them; the last remote arrivals
//                        before a block exits and its shared memory goes away)
//   mbarrier_arrive_cluster(bar, rank)
//                        one arrival on the barrier at `bar`'s offset in block `rank`'s shared memory
//                        (mapa + mbarrier.arrive.shared::cluster). Its default semantics (release at
//                        CTA scope) order this thread's own shared-memory reads before the arrival,
//                        which is all a stage's consumer must promise; .release.cluster would add a
//                        MEMBAR.ALL.GPU to every arrival (measured: the kernel 2.75x slower)
//   cluster_dimension(blocks)   (host) the launch attribute for clusters of `blocks` blocks along x,
//                        for cudaLaunchKernelEx and cudaOccupancyMaxActiveClusters
//   tma_load_2d_multicast(dst, map, c0, c1, bar, mask)
//                        tma_load_2d (common/tma.cuh) whose box is written at dst's offset in the
//                        shared memory of every block in `mask` (bit r: rank r), completing its bytes
//                        on the barrier at bar's offset in each of them
//
// Source: PTX ISA 8.x, "Cluster of Cooperative Thread Arrays", "barrier.cluster", "mapa",
// "mbarrier.arrive" (.shared::cluster), "cp.async.bulk.tensor" (.multicast::cluster); CUDA C++
// Programming Guide, "Thread Block Clusters" and "Distributed Shared Memory".
// Older targets: compiled for sm_70..89 too, where the wrappers trap (LADDER_CLUSTER_UNAVAILABLE);
// the steps that use them require sm_90 before launching.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "mbarrier.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define LADDER_CLUSTER_UNAVAILABLE __trap();
#endif

namespace ladder {

inline cudaLaunchAttribute cluster_dimension(unsigned blocks) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = blocks;
  attribute.val.clusterDim.y = attribute.val.clusterDim.z = 1;
  return attribute;
}

__device__ __forceinline__ uint32_t cluster_rank() {
#ifdef LADDER_CLUSTER_UNAVAILABLE
  LADDER_CLUSTER_UNAVAILABLE
  return 0;
#else
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
#endif
}

__device__ __forceinline__ void cluster_sync() {
#ifdef LADDER_CLUSTER_UNAVAILABLE
  LADDER_CLUSTER_UNAVAILABLE
#else
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void mbarrier_arrive_cluster(uint64_t* bar, uint32_t rank) {
#ifdef LADDER_CLUSTER_UNAVAILABLE
  LADDER_CLUSTER_UNAVAILABLE
  (void)bar;
  (void)rank;
#else
  asm volatile(
      "{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
      " mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_address(bar)),
      "r"(rank)
      : "memory");
#endif
}

__device__ __forceinline__ void tma_load_2d_multicast(void* smem_dst, const CUtensorMap* map, int32_t c0, int32_t c1,
                                                      uint64_t* bar, uint16_t mask) {
#ifdef LADDER_CLUSTER_UNAVAILABLE
  LADDER_CLUSTER_UNAVAILABLE
  (void)smem_dst;
  (void)map;
  (void)c0;
  (void)c1;
  (void)bar;
  (void)mask;
#else
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(smem_address(smem_dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_address(bar)), "h"(mask)
      : "memory");
#endif
}

}  // namespace ladder
