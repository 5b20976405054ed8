// Warp-level tensor-core MMA (sm_80 and later): TF32's conversion, mma.sync instruction and ldmatrix
// (sgemm tf32_02), and FP64's mma.sync (avg_matvec 08), one wrapper each, so a kernel shows which
// instruction it issues.
//
//   to_tf32(x)            cvt.rna.tf32.f32: x rounded to nearest (ties away) to TF32's 10 mantissa
//                         bits, returned as the 32-bit pattern the MMA reads (low 13 bits zero).
//                         Without it the tensor core simply ignores the low 13 bits (a cut, twice the
//                         error of rounding).
//   mma_m16n8k8_tf32      mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32: one warp, D (16 x 8,
//                         fp32) += A (16 x 8, TF32) · B (8 x 8, TF32). HMMA.1688.F32.TF32 in SASS.
//                         Fragments, lane = 4 g + t (g = lane / 4, t = lane % 4):
//                           a[0] A[g][t]    a[1] A[g+8][t]    a[2] A[g][t+4]    a[3] A[g+8][t+4]
//                           b[0] B[t][g]    b[1] B[t+4][g]
//                           d[0] D[g][2t]   d[1] D[g][2t+1]   d[2] D[g+8][2t]   d[3] D[g+8][2t+1]
//   ldmatrix_x4           ldmatrix.sync.aligned.m8n8.x4.shared.b16: four 8 x 16-byte matrices from
//                         shared memory; lanes 8q .. 8q+7 give the row addresses of matrix q, and
//                         each lane receives word (lane % 4) of row (lane / 4) of each matrix —
//                         exactly a[q] above when matrix q is A's rows (q & 1) 8.. +7, k (q >> 1) 4.. +3
//                         stored K-major. LDSM in SASS: one instruction instead of four LDS.32.
//   mma_m8n8k4_f64        mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64: one warp, D (8 x 8,
//                         double) += A (8 x 4) · B (4 x 8), every product and sum in IEEE double.
//                         DMMA.884 in SASS. Fragments, lane = 4 g + t:
//                           a A[g][t]    b B[t][g]    d[0] D[g][2t]   d[1] D[g][2t+1]
//
// Source: PTX ISA 8.x, sections 9.7.14.5.x "Matrix Fragments for mma.m16n8k8" (.tf32) and
// "Matrix Fragments for mma.m8n8k4 with .f64 floating point type", 9.7.14.5.15 "ldmatrix"; cvt with
// .tf32 (section 9.7.9.21).
// Older targets: these compile for sm_70/75 too, where these instructions do not exist; there each
// wrapper traps (LADDER_MMA_UNAVAILABLE). It never runs: steps that use them declare NEEDS sm_80
// on their add_step line and exit 2 on such GPUs.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define LADDER_MMA_UNAVAILABLE __trap();
#endif

namespace ladder {

__device__ __forceinline__ uint32_t to_tf32(float x) {
  uint32_t r = 0;
#ifdef LADDER_MMA_UNAVAILABLE
  LADDER_MMA_UNAVAILABLE
  (void)x;
#else
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
#endif
  return r;
}

__device__ __forceinline__ void mma_m16n8k8_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#ifdef LADDER_MMA_UNAVAILABLE
  LADDER_MMA_UNAVAILABLE
  (void)d;
  (void)a;
  (void)b;
#else
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

__device__ __forceinline__ void mma_m8n8k4_f64(double (&d)[2], double a, double b) {
#ifdef LADDER_MMA_UNAVAILABLE
  LADDER_MMA_UNAVAILABLE
  (void)d;
  (void)a;
  (void)b;
#else
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
               : "+d"(d[0]), "+d"(d[1])
               : "d"(a), "d"(b));
#endif
}

// smem_row: this lane's row address (16-byte aligned) in shared memory.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* smem_row) {
#ifdef LADDER_MMA_UNAVAILABLE
  LADDER_MMA_UNAVAILABLE
  (void)smem_row;
  r[0] = r[1] = r[2] = r[3] = 0;
#else
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem_row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
#endif
}

}  // namespace ladder
