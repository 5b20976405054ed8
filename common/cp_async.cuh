// cp.async (sm_80 and later): copies from global to shared memory that bypass the registers, issued
// now and completed later, so a kernel can have the next tiles in flight while it computes on this
// one (sgemm 09-13 and tf32_02, separable_conv 10-13, avg_matvec 08). In SASS: LDGSTS.
//
//   cp_async_4 / _8 / _16      issue one copy; with a `valid` argument the instruction's
//                              source-size form: valid = false reads nothing (src must still be a
//                              valid address) and zero-fills the destination. Without it, the plain
//                              form, which always reads (ptxas allocates registers differently
//                              for the two; separable_conv 10 was tuned with the plain one).
//                              cp_async_8 has the source-size form only
//   cp_async_commit            closes this thread's group of copies issued since the last commit
//   cp_async_wait<N>           waits until at most N of this thread's committed groups are in flight
//
// The wait and the plain copies are compiler memory barriers, the source-size copies and the commit
// are not: a kernel orders the shared reads of a buffer before the copies that refill it with
// __syncthreads(), as it must for the other threads anyway.
// The 16-byte copy still addresses all 16 bytes when it zero-fills (compute-sanitizer memcheck
// sees them): at an array's end copy float by float instead.
//
// Older targets: a fat binary also compiles these for sm_70/75, where the instruction does not
// exist. There each copy traps (LADDER_CP_ASYNC_UNAVAILABLE) and the commit and the wait are empty;
// none of it runs, because every step that uses cp.async declares NEEDS sm_80 on its add_step line
// and exits 2 on such GPUs.
#pragma once

#include <cuda_runtime.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define LADDER_CP_ASYNC_UNAVAILABLE __trap();
#endif

namespace ladder {

// 4 bytes, cached in L1 and L2 (.ca). Without `valid`: a copy that always reads its source (the
// plain form of the instruction, no source-size operand).
__device__ __forceinline__ void cp_async_4(float* smem_dst, const float* src) {
#ifdef LADDER_CP_ASYNC_UNAVAILABLE
  LADDER_CP_ASYNC_UNAVAILABLE
#else
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(__cvta_generic_to_global(src))
               : "memory");
#endif
}
__device__ __forceinline__ void cp_async_4(float* smem_dst, const float* src, bool valid) {
#ifdef LADDER_CP_ASYNC_UNAVAILABLE
  LADDER_CP_ASYNC_UNAVAILABLE
#else
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 4 : 0));
#endif
}

// 8 bytes (one double), cached in L1 and L2 (.ca), in the source-size form: valid = false reads
// nothing and zero-fills. For rows of doubles that need not start on a 16-byte boundary.
__device__ __forceinline__ void cp_async_8(double* smem_dst, const double* src, bool valid) {
#ifdef LADDER_CP_ASYNC_UNAVAILABLE
  LADDER_CP_ASYNC_UNAVAILABLE
#else
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 8 : 0));
#endif
}

// 16 bytes, cached in L2 only (.cg): the data lands in shared memory, L1 would keep a second copy.
// smem_dst and src 16-byte aligned.
__device__ __forceinline__ void cp_async_16(float* smem_dst, const float* src) {
#ifdef LADDER_CP_ASYNC_UNAVAILABLE
  LADDER_CP_ASYNC_UNAVAILABLE
#else
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(__cvta_generic_to_global(src))
               : "memory");
#endif
}
__device__ __forceinline__ void cp_async_16(float* smem_dst, const float* src, bool valid) {
#ifdef LADDER_CP_ASYNC_UNAVAILABLE
  LADDER_CP_ASYNC_UNAVAILABLE
#else
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#ifndef LADDER_CP_ASYNC_UNAVAILABLE
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int N>
__device__ __forceinline__ void cp_async_wait() {
#ifndef LADDER_CP_ASYNC_UNAVAILABLE
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

}  // namespace ladder
