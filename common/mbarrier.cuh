// mbarrier (sm_80; the transaction-count forms sm_90): a barrier object in shared memory that
// threads arrive on and wait for by phase, and that the copy engine (TMA) can complete by counting
// the bytes it has written (sgemm tf32_03/04: the stages of a TMA -> wgmma pipeline).
//
//   mbarrier_init(bar, count)      mbarrier.init: the phase completes after `count` arrivals (plus
//                                  the transaction bytes announced by expect_tx, if any)
//   mbarrier_init_fence()          fence.mbarrier_init.release.cluster: makes the inits visible to
//                                  the copy engine (then __syncthreads for the other threads)
//   mbarrier_arrive(bar)           mbarrier.arrive: one arrival
//   mbarrier_arrive_expect_tx(bar, bytes)
//                                  mbarrier.arrive.expect_tx: one arrival, and `bytes` more to come
//                                  from cp.async.bulk copies that name this barrier
//   mbarrier_wait(bar, parity)     mbarrier.try_wait.parity in a loop: returns once the phase with
//                                  that parity (0, 1, 0, ... for the 1st, 2nd, 3rd use) has completed
//
// Source: PTX ISA 8.x, section 9.7.13.15 "Parallel Synchronization and Communication Instructions:
// mbarrier"; CUDA C++ Programming Guide, "Asynchronous Barrier" / "Tensor Memory Access".
// Older targets: compiled for sm_70..89 too, where the wrappers trap (LADDER_MBARRIER_UNAVAILABLE;
// mbarrier_init_fence is empty); steps that use them require sm_90 before launching.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define LADDER_MBARRIER_UNAVAILABLE __trap();
#endif

namespace ladder {

// The 32-bit shared-memory address of `p` (a generic pointer into shared memory), as PTX's
// .shared operands take it.
__device__ __forceinline__ uint32_t smem_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t count) {
#ifdef LADDER_MBARRIER_UNAVAILABLE
  LADDER_MBARRIER_UNAVAILABLE
  (void)bar;
  (void)count;
#else
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(bar)), "r"(count) : "memory");
#endif
}

__device__ __forceinline__ void mbarrier_init_fence() {
#ifndef LADDER_MBARRIER_UNAVAILABLE
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
#ifdef LADDER_MBARRIER_UNAVAILABLE
  LADDER_MBARRIER_UNAVAILABLE
  (void)bar;
#else
  asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(smem_address(bar))
               : "memory");
#endif
}

__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
#ifdef LADDER_MBARRIER_UNAVAILABLE
  LADDER_MBARRIER_UNAVAILABLE
  (void)bar;
  (void)bytes;
#else
  asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}\n" ::"r"(
                   smem_address(bar)),
               "r"(bytes)
               : "memory");
#endif
}

__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity) {
#ifdef LADDER_MBARRIER_UNAVAILABLE
  LADDER_MBARRIER_UNAVAILABLE
  (void)bar;
  (void)parity;
#else
  const uint32_t addr = smem_address(bar);
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(addr), "r"(parity)
        : "memory");
  } while (!done);
#endif
}

}  // namespace ladder
