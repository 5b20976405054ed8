// TMA, the Tensor Memory Accelerator (sm_90): one thread asks the copy engine for a whole 2-D box of
// a matrix, global -> shared, described by a tensor map; the engine writes the box (swizzled if the
// map says so), fills what lies outside the matrix with zeros, and completes the bytes on an
// mbarrier (common/mbarrier.cuh). sgemm tf32_03/04 load their A and B tiles this way.
//
// Host:   make_tensor_map_2d(...)   cuTensorMapEncodeTiled, reached through the runtime's
//                                   cudaGetDriverEntryPoint: nothing links libcuda (a binary that
//                                   did would not even load on a machine without the driver).
// Device: tma_load_2d(dst, map, c0, c1, bar)
//                                   cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::
//                                   complete_tx::bytes: the box whose first element is (c0 along the
//                                   contiguous dimension, c1 along rows) into dst (1024-byte aligned
//                                   for the 128-byte swizzle). UTMALDG in SASS.
//         tma_store_2d(map, c0, c1, src)
//                                   cp.async.bulk.tensor.2d.global.shared::cta.bulk_group: the box at
//                                   src (shared; 1024-byte aligned for the 128-byte swizzle) to the
//                                   matrix at (c0, c1), clipped at the matrix's edges. UTMASTG.
//         fence_proxy_async_shared()  fence.proxy.async.shared::cta: this thread's ordinary stores to
//                                   shared memory made visible to the copy engine (before the
//                                   barrier after which one thread issues tma_store_2d)
//         tma_store_commit()        cp.async.bulk.commit_group: this thread's stores since the last
//                                   commit become one group
//         tma_store_wait_read<N>()  cp.async.bulk.wait_group.read N: all but this thread's newest N
//                                   groups have read their shared memory (it may be written again)
//         tma_store_wait<N>()       cp.async.bulk.wait_group N: ... and written global memory
// The map is a kernel parameter passed by value as `const __grid_constant__ CUtensorMap`: the copy
// engine reads it from the parameter space (tma_load_2d takes its generic address).
// Limits the encoder enforces: the base 16-byte aligned, every row pitch a multiple of 16 bytes, box
// dimensions at most 256, a swizzled box's rows at most the swizzle's width (128 bytes: 32 floats).
// make_tensor_map_2d checks the first two itself, naming the pitch; the others reach the encoder,
// whose refusal it reports with the CUresult and the shapes.
// Source: PTX ISA 8.x, "cp.async.bulk.tensor"; CUDA Driver API, cuTensorMapEncodeTiled; CUDA C++
// Programming Guide, "Asynchronous Data Copies using the Tensor Memory Accelerator (TMA)".
// Older targets: compiled for sm_70..89 too, where the device wrappers trap (LADDER_TMA_UNAVAILABLE);
// steps that use them declare NEEDS sm_90a.
#pragma once

#include "common/buffers.h"
#include "common/check.h"

#include <cuda.h>           // CUtensorMap and its enums (types only)
#include <cudaTypedefs.h>   // PFN_cuTensorMapEncodeTiled_v12000
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define LADDER_TMA_UNAVAILABLE __trap();
#endif

namespace ladder {

// The driver's cuTensorMapEncodeTiled, found once through the runtime; CudaError (exit 3) if the
// driver has none.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found));
#else
    CUDA_CHECK(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &p, cudaEnableDefault, &found));
#endif
    if (found != cudaDriverEntryPointSuccess || !p)
      throw CudaError("the driver has no cuTensorMapEncodeTiled (TMA needs a CUDA 12 driver)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

// A row-major fp32 matrix of `rows` x `cols` (row pitch `pitch` floats) seen in boxes of
// box_rows x box_cols; elements outside the matrix read as zero. Throws CudaError (exit 3) where the
// base or pitch breaks the limits above or the encoder refuses.
inline CUtensorMap make_tensor_map_2d(const float* base, uint64_t rows, uint64_t cols, uint64_t pitch,
                                      uint32_t box_rows, uint32_t box_cols, CUtensorMapSwizzle swizzle) {
  if (!aligned16(base) || (pitch * sizeof(float)) % 16 != 0)
    throw CudaError("TMA needs a 16-byte aligned base and a row pitch of a multiple of 16 bytes (pitch " +
                    std::to_string(pitch) + " floats)");
  CUtensorMap map;
  const cuuint64_t dims[2] = {cols, rows};                          // innermost first
  const cuuint64_t strides[1] = {pitch * sizeof(float)};           // bytes, for dims 1..
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r = tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(base), dims,
                                          strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                          CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw CudaError("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(static_cast<int>(r)) + ") for a " +
                    std::to_string(rows) + " x " + std::to_string(cols) + " matrix, box " +
                    std::to_string(box_rows) + " x " + std::to_string(box_cols));
  return map;
}

#ifdef __CUDACC__
__device__ __forceinline__ void tma_load_2d(void* smem_dst, const CUtensorMap* map, int32_t c0, int32_t c1,
                                            uint64_t* bar) {
#ifdef LADDER_TMA_UNAVAILABLE
  LADDER_TMA_UNAVAILABLE
  (void)smem_dst;
  (void)map;
  (void)c0;
  (void)c1;
  (void)bar;
#else
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          static_cast<uint32_t>(__cvta_generic_to_shared(smem_dst))),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1),
      "r"(static_cast<uint32_t>(__cvta_generic_to_shared(bar)))
      : "memory");
#endif
}

__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, int32_t c0, int32_t c1, const void* smem_src) {
#ifdef LADDER_TMA_UNAVAILABLE
  LADDER_TMA_UNAVAILABLE
  (void)map;
  (void)c0;
  (void)c1;
  (void)smem_src;
#else
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(c0), "r"(c1), "r"(static_cast<uint32_t>(__cvta_generic_to_shared(smem_src)))
               : "memory");
#endif
}

__device__ __forceinline__ void fence_proxy_async_shared() {
#ifdef LADDER_TMA_UNAVAILABLE
  LADDER_TMA_UNAVAILABLE
#else
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void tma_store_commit() {
#ifdef LADDER_TMA_UNAVAILABLE
  LADDER_TMA_UNAVAILABLE
#else
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}

template <int N>
__device__ __forceinline__ void tma_store_wait_read() {
#ifdef LADDER_TMA_UNAVAILABLE
  LADDER_TMA_UNAVAILABLE
#else
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
#endif
}

template <int N>
__device__ __forceinline__ void tma_store_wait() {
#ifdef LADDER_TMA_UNAVAILABLE
  LADDER_TMA_UNAVAILABLE
#else
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}
#endif

}  // namespace ladder
