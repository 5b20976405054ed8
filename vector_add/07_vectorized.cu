// vector_add step 07: 16-byte loads and stores (float4), with a scalar tail for any n, and one chunk
// of work per block instead of a grid-stride loop.
// Beyond the post. Each thread now moves 4 floats per instruction: a quarter of the load/store
// instructions and address calculations, and more bytes in flight (512 B per warp-wide load
// instead of 128 B; 64 B per thread against step 04's 32 B, which its compiler gets by unrolling;
// Nsight Compute, H100, 2026-11-27: DRAM busy 90.7% of the time against 82.8%). Each block takes
// one chunk of 512 threads x 2 float4 per array and each thread issues all four of its loads
// before its first store, so every resident block has its whole chunk's loads in flight at once;
// the grid has as many blocks as chunks and the GPU's block scheduler refills an SM the moment a
// block ends.
// Changes from step 04: float4 accesses over n/4 groups, a chunk per block (2 float4 per array per
// thread) in place of the grid-stride loop; the last n % 4 floats by plain scalar code.
// Costs: needs 16-byte aligned arrays (cudaMalloc gives 256-byte alignment; the launcher refuses
// others with a usage error, exit 2);
// many more, short-lived blocks than step 04's one per resident slot.
// Source: beyond the post; the float4 idiom of NVIDIA's "CUDA Pro Tip: Increase Performance with
// Vectorized Memory Access"; the chunk per block is the shape of a framework's elementwise kernel.
// Run: build/bin/vector_add_07_vectorized
#include "vector_add/vector_add.cuh"

#include <algorithm>
#include <climits>
#include <cstdint>

namespace vector_add::vectorized {

constexpr int kThreads = 512;
constexpr int kPerThread = 2;  // float4 of each array per thread, all loaded before any is stored
constexpr int64_t kChunk = int64_t{kThreads} * kPerThread;  // float4 per block

__global__ void __launch_bounds__(kThreads)
    add_float4(const float4* __restrict__ x, const float4* __restrict__ y, float4* __restrict__ r,
               int64_t n4, int64_t chunks, const float* __restrict__ x_tail,
               const float* __restrict__ y_tail, float* __restrict__ r_tail, int tail) {
  // Block b adds float4 b*kChunk ... (b+1)*kChunk - 1: thread t takes t and t + kThreads, so each
  // load instruction of a warp still reads 512 consecutive bytes. The loop runs once per block
  // unless n needs more chunks than a grid can have blocks (2^31 - 1).
  for (int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    const int64_t base = chunk * kChunk + threadIdx.x;
    float4 a[kPerThread], b[kPerThread];
    // Step 1: issue every load of this chunk.
#pragma unroll
    for (int u = 0; u < kPerThread; ++u) {
      const int64_t i = base + u * kThreads;
      if (i < n4) {
        a[u] = x[i];
        b[u] = y[i];
      }
    }
    // Step 2: add and store.
#pragma unroll
    for (int u = 0; u < kPerThread; ++u) {
      const int64_t i = base + u * kThreads;
      if (i < n4) r[i] = make_float4(a[u].x + b[u].x, a[u].y + b[u].y, a[u].z + b[u].z, a[u].w + b[u].w);
    }
  }
  // The 0-3 floats past the last whole float4.
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tid < tail) r_tail[tid] = x_tail[tid] + y_tail[tid];
}

void launch(const ladder::DeviceInfo&, Arrays d, int64_t n, cudaStream_t stream) {
  if (!ladder::aligned16(d.x) || !ladder::aligned16(d.y) || !ladder::aligned16(d.r))
    throw ladder::UsageError("07_vectorized needs 16-byte aligned arrays");
  const int64_t n4 = n / 4;
  const int tail = static_cast<int>(n - 4 * n4);
  const int64_t chunks = (n4 + kChunk - 1) / kChunk;
  // At least one block, for the tail when n < 4.
  const int blocks = static_cast<int>(std::clamp<int64_t>(chunks, 1, INT_MAX));
  add_float4<<<blocks, kThreads, 0, stream>>>(
      reinterpret_cast<const float4*>(d.x), reinterpret_cast<const float4*>(d.y),
      reinterpret_cast<float4*>(d.r), n4, chunks, d.x + 4 * n4, d.y + 4 * n4, d.r + 4 * n4, tail);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"vector_add/07_vectorized", launch};
LADDER_STEP(kStep);

}  // namespace vector_add::vectorized
