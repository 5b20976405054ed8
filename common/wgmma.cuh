// wgmma (sm_90a only): warpgroup-level matrix multiply-accumulate on Hopper's tensor cores, in TF32.
// Four consecutive warps (a warpgroup, 128 threads, the first warp's index a multiple of 4) issue one
// instruction that multiplies a 64 x 8 tile of A by an 8 x N tile of B into 64 x N fp32 accumulators
// held in their registers, asynchronously: the instruction reads A and B from shared memory through
// 64-bit matrix descriptors while the warps go on; commit_group closes a batch, wait_group waits.
// HGMMA.64xNx8.F32.TF32 in SASS.
//
//   wgmma_descriptor_k_major_sw128(tile)   the descriptor of a tile of rows of 128 bytes (32 floats of
//                  k), stored as TMA writes it with CU_TENSOR_MAP_SWIZZLE_128B: 16-byte chunk c of row r
//                  at chunk c ^ (r % 8), 8-row groups 1024 bytes apart (the stride byte offset), the
//                  tile 1024-byte aligned. The k8 slice j of the tile is the same descriptor with its
//                  start address 32 j bytes further: the hardware applies the swizzle to the address.
//   wgmma_fence    wgmma.fence: orders this thread's register accesses to the accumulators before
//                  the next wgmma reads them (once before the first wgmma of a batch)
//   wgmma_commit   wgmma.commit_group: the wgmmas issued since the last commit form one group
//   wgmma_wait<N>  wgmma.wait_group N: until at most N groups are still running; only then may the
//                  accumulators be read or the shared tiles they read be overwritten
//   wgmma_m64n128k8_tf32(d, desc_a, desc_b, scale_d)
//                  accumulator layout (warp w of the warpgroup, lane = 4 g + t):
//                  d[4 j + 0], d[4 j + 1] = D[16 w + g][8 j + 2 t], D[16 w + g][8 j + 2 t + 1];
//                  d[4 j + 2], d[4 j + 3] = the same 8 rows further down (16 w + g + 8).
//   wgmma_m64n256k8_tf32_rs(d, a, desc_b, scale_d)
//                  A (64 x 8) from registers instead: the way round TF32's K-major rule when the
//                  K-major operand is the other one (sgemm tf32_04)
//   setmaxnreg_dec<N> / setmaxnreg_inc<N>
//                  setmaxnreg (sm_90a): a warpgroup's registers per thread lowered or raised to N
// TF32 has no transposed form: A must be M x K with K contiguous and B given as N x K with K
// contiguous (K-major), unlike fp16/bf16, which may read either.
// The long operand lists (64 and 128 accumulators) are written out: one wrapper per shape.
//
// Source: PTX ISA 8.x, section 9.7.15 "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
// Instructions" (9.7.15.5.1 "Matrix Descriptor Format", 9.7.15.5.x register fragments, "Shared
// memory matrix layout"); NVIDIA CUDA C++ Programming Guide, Hopper "sm_90a" features.
// Builds: the instruction exists only in sm_90a code (-gencode=arch=compute_90a,code=sm_90a). For
// every other target the two wgmma wrappers compile to a trap (LADDER_WGMMA_UNAVAILABLE) and the
// fence, commit, wait and setmaxnreg to nothing; steps that use them declare NEEDS sm_90a on their
// add_step line and exit 2 elsewhere.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define LADDER_WGMMA_UNAVAILABLE __trap();
#endif

namespace ladder {

__device__ __forceinline__ uint64_t wgmma_descriptor_k_major_sw128(const void* tile) {
  const uint64_t addr = static_cast<uint64_t>(__cvta_generic_to_shared(tile));
  uint64_t desc = 0;
  desc |= (addr & 0x3FFFF) >> 4;          // bits 0-13: start address / 16
  desc |= uint64_t(1) << 16;              // bits 16-29: leading byte offset / 16 (unused: K fits the swizzle)
  desc |= uint64_t(1024 >> 4) << 32;      // bits 32-45: stride byte offset / 16: 8 rows of 128 bytes
  desc |= uint64_t(1) << 62;              // bits 62-63: 1 = 128-byte swizzle
  return desc;
}

// The same descriptor `bytes` further on (a multiple of 16): the k8 slices of a tile.
__device__ __forceinline__ uint64_t wgmma_descriptor_advance(uint64_t desc, uint32_t bytes) {
  return desc + (bytes >> 4);
}

__device__ __forceinline__ void wgmma_fence() {
#ifndef LADDER_WGMMA_UNAVAILABLE
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void wgmma_commit() {
#ifndef LADDER_WGMMA_UNAVAILABLE
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

template <int N>
__device__ __forceinline__ void wgmma_wait() {
#ifndef LADDER_WGMMA_UNAVAILABLE
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}

// The accumulator operands of the m64nNk8 instructions: the registers in the instruction's braces
// ("%0" .. "%N-1") and the N "+f" outputs d[0] .. d[N-1] (N = 64 for n = 128, 128 for n = 256).
#define LADDER_WGMMA_D64_REGS \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define LADDER_WGMMA_D128_REGS \
  LADDER_WGMMA_D64_REGS ", " \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define LADDER_WGMMA_D64_OUT(d) \
  "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3]), "+f"((d)[4]), "+f"((d)[5]), "+f"((d)[6]), "+f"((d)[7]), \
  "+f"((d)[8]), "+f"((d)[9]), "+f"((d)[10]), "+f"((d)[11]), "+f"((d)[12]), "+f"((d)[13]), "+f"((d)[14]), "+f"((d)[15]), \
  "+f"((d)[16]), "+f"((d)[17]), "+f"((d)[18]), "+f"((d)[19]), "+f"((d)[20]), "+f"((d)[21]), "+f"((d)[22]), "+f"((d)[23]), \
  "+f"((d)[24]), "+f"((d)[25]), "+f"((d)[26]), "+f"((d)[27]), "+f"((d)[28]), "+f"((d)[29]), "+f"((d)[30]), "+f"((d)[31]), \
  "+f"((d)[32]), "+f"((d)[33]), "+f"((d)[34]), "+f"((d)[35]), "+f"((d)[36]), "+f"((d)[37]), "+f"((d)[38]), "+f"((d)[39]), \
  "+f"((d)[40]), "+f"((d)[41]), "+f"((d)[42]), "+f"((d)[43]), "+f"((d)[44]), "+f"((d)[45]), "+f"((d)[46]), "+f"((d)[47]), \
  "+f"((d)[48]), "+f"((d)[49]), "+f"((d)[50]), "+f"((d)[51]), "+f"((d)[52]), "+f"((d)[53]), "+f"((d)[54]), "+f"((d)[55]), \
  "+f"((d)[56]), "+f"((d)[57]), "+f"((d)[58]), "+f"((d)[59]), "+f"((d)[60]), "+f"((d)[61]), "+f"((d)[62]), "+f"((d)[63])
#define LADDER_WGMMA_D128_OUT(d) \
  LADDER_WGMMA_D64_OUT(d), \
  "+f"((d)[64]), "+f"((d)[65]), "+f"((d)[66]), "+f"((d)[67]), "+f"((d)[68]), "+f"((d)[69]), "+f"((d)[70]), "+f"((d)[71]), \
  "+f"((d)[72]), "+f"((d)[73]), "+f"((d)[74]), "+f"((d)[75]), "+f"((d)[76]), "+f"((d)[77]), "+f"((d)[78]), "+f"((d)[79]), \
  "+f"((d)[80]), "+f"((d)[81]), "+f"((d)[82]), "+f"((d)[83]), "+f"((d)[84]), "+f"((d)[85]), "+f"((d)[86]), "+f"((d)[87]), \
  "+f"((d)[88]), "+f"((d)[89]), "+f"((d)[90]), "+f"((d)[91]), "+f"((d)[92]), "+f"((d)[93]), "+f"((d)[94]), "+f"((d)[95]), \
  "+f"((d)[96]), "+f"((d)[97]), "+f"((d)[98]), "+f"((d)[99]), "+f"((d)[100]), "+f"((d)[101]), "+f"((d)[102]), "+f"((d)[103]), \
  "+f"((d)[104]), "+f"((d)[105]), "+f"((d)[106]), "+f"((d)[107]), "+f"((d)[108]), "+f"((d)[109]), "+f"((d)[110]), "+f"((d)[111]), \
  "+f"((d)[112]), "+f"((d)[113]), "+f"((d)[114]), "+f"((d)[115]), "+f"((d)[116]), "+f"((d)[117]), "+f"((d)[118]), "+f"((d)[119]), \
  "+f"((d)[120]), "+f"((d)[121]), "+f"((d)[122]), "+f"((d)[123]), "+f"((d)[124]), "+f"((d)[125]), "+f"((d)[126]), "+f"((d)[127])

// D (64 x 128, fp32, 64 registers a thread) (+)= A (64 x 8) · B (8 x 128); A and B from shared memory
// through their descriptors, both K-major (the only layout TF32 allows). scale_d = 0: D = A·B.
__device__ __forceinline__ void wgmma_m64n128k8_tf32(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int scale_d) {
#ifdef LADDER_WGMMA_UNAVAILABLE
  LADDER_WGMMA_UNAVAILABLE
  (void)d;
  (void)desc_a;
  (void)desc_b;
  (void)scale_d;
#else
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"
      LADDER_WGMMA_D64_REGS
      "}, %64, %65, p, 1, 1;\n}\n"
      : LADDER_WGMMA_D64_OUT(d)
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
#endif
}

// D (64 x 256, fp32, 128 registers a thread) (+)= A (64 x 8) · B (8 x 256), with A from registers
// (4 a thread: the m64k8 TF32 fragment, warp w of the warpgroup holding
// rows 16 w .. 16 w + 15 as mma.m16n8k8 does: a[0] (g, t), a[1] (g + 8, t), a[2] (g, t + 4),
// a[3] (g + 8, t + 4)). The registers must stay unchanged until the wgmma has completed (wait_group).
__device__ __forceinline__ void wgmma_m64n256k8_tf32_rs(float (&d)[128], const uint32_t (&a)[4], uint64_t desc_b,
                                                      int scale_d) {
#ifdef LADDER_WGMMA_UNAVAILABLE
  LADDER_WGMMA_UNAVAILABLE
  (void)d;
  (void)a;
  (void)desc_b;
  (void)scale_d;
#else
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %133, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"
      LADDER_WGMMA_D128_REGS
      "}, {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
      : LADDER_WGMMA_D128_OUT(d)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
#endif
}

// setmaxnreg: a warpgroup gives registers back to the SM's pool (dec) or takes them (inc), so that
// producer warps that only issue copies run on few registers and the MMA warps on many. Takes effect
// only in a kernel with a register cap at entry (__launch_bounds__(threads, 1)); N a multiple of 8
// in 24..256.
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
#ifndef LADDER_WGMMA_UNAVAILABLE
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
#ifndef LADDER_WGMMA_UNAVAILABLE
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}

}  // namespace ladder
