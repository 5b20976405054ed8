// sgemm step 11: shape classes — a kernel for each kind of problem, picked by the shape.
// Steps 05-10 are one design, tiles of C that reuse every loaded value 64-128 times, tuned by size.
// That design needs C to have tiles. When m or n is at most 16 (a batch of a few vectors, a GEMV)
// there is no reuse to win: C = A·B reads A or B once and does 2 FLOPs per 4 bytes read (m = 1:
// each B element serves one multiply-add), so the problem is bound by memory bandwidth, and a
// 128 x 256 tile computes 1/128 of zeros. And when C is small but k long (64 x 64 x 65536), the
// whole GPU must share a few tiles. This step gives each class the kernel its bound calls for:
//   m <= 16   gemm_stream_b: B streamed once at full bandwidth. A lane owns 4 columns of C (one
//             16-byte load per row of B), a warp 128 columns and 4 consecutive k rows per pass, the
//             8 warps of a block interleaved along k (8 x 4 KB of B in flight per block, the next
//             rows loaded while this pass multiplies), A's m <= 16 values per k read once per warp
//             (one broadcast 16-byte load per row of A). Few columns cannot fill the GPU, so k is
//             cut into slices too: slices x column groups fill the GPU's block slots. Each block
//             sums its 8 warps in shared memory and writes its partial rows; the last block of a
//             column group to finish (an atomic counter, __threadfence) adds the slices in slice
//             order — deterministic, one launch, no second kernel;
//   n <= 16   gemm_dot_rows (m > 16): A streamed once. A warp owns 2 rows of C and walks along k,
//             each lane 16 bytes of each row per load (4 loads in flight), B's n <= 16 values per k
//             read from L1 (for n = 1 a 16-byte load of the vector); a shuffle tree sums the lanes;
//   few tiles, long k   (m, n > 16, C with too few tiles for the GPU's slots): split-K. Step 10's
//             tiling and split where its 128 x 256 tiles are at least half used; otherwise 64 x 64
//             tiles (64x64x16_8x4_w32x32_s3, 128 threads: 1/8 the padding of a 128 x 256 tile at
//             64 x 64) sliced down to 128 of k, their partials added by a kernel that gives each
//             output 16 threads along the slices (step 10's sum gives it one, which crawls through
//             hundreds of slices);
//   otherwise step 09's kernel with 09's default for this GPU and shape.
// Every number is read off the device: blocks per SM from the occupancy calculator
// (ladder::blocks_per_sm, profile-aware), slots = SMs x blocks per SM. The report's choice line
// names the class, the kernel and the split. The skinny kernels themselves need no cp.async, but
// the step declares sm_80 for its tiled classes (NEEDS on its add_step line), so on an older GPU it
// exits 2 at every shape, as steps 09 and 10. Not tunable: the rule picks every kernel and tiling,
// and --tile is a usage error (exit 2).
// Changes from step 10: the two skinny kernels, the small-tile split and its sum, the class rule.
// Costs: the skinny kernels do 2 FLOPs per 4 bytes of the streamed matrix — useless for large C;
// the split classes a workspace of slices x m x n floats (Step::workspace_bytes), written once
// and read once. The last-block counters are 64 KB of device memory (a __device__ array that every
// last block resets to zero).
// Source: beyond the posts (cuBLAS and CUTLASS pick among GEMV, split-K and tiled kernels by shape
// the same way; the last-block sum is the CUDA samples' threadFenceReduction).
// Run: build/bin/sgemm_11_shape_classes --m 1 --n 4096 --k 4096 (or --m 4096 --n 1, --m 8,
// --m 64 --n 64 --k 65536, --m 4096)
#include "10_split_k.cu"  // steps 09 and 10: pipelined_tile, the split-K kernel, their rules, unchanged

#include <algorithm>
#include <map>
#include <string>
#include <type_traits>

namespace sgemm::shape_classes {

using warptiling::WarpTile;

constexpr int kThreads = 256;           // the skinny kernels: 8 warps
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ float4 zero4() { return make_float4(0.f, 0.f, 0.f, 0.f); }
__device__ __forceinline__ float4 ldg4(const float* p) { return __ldg(reinterpret_cast<const float4*>(p)); }
__device__ __forceinline__ void add4(float4& a, const float4& b) { a.x += b.x, a.y += b.y, a.z += b.z, a.w += b.w; }
// acc += a * b, element by element.
__device__ __forceinline__ void fma4(float4& acc, float a, const float4& b) {
  acc.x = fmaf(a, b.x, acc.x), acc.y = fmaf(a, b.y, acc.y), acc.z = fmaf(a, b.z, acc.z), acc.w = fmaf(a, b.w, acc.w);
}

// ---- m <= 16: stream B ----------------------------------------------------------------------------

constexpr int kGroupCols = 128;                    // columns of C per block: 32 lanes x 4
constexpr int kPassRows = 4;                       // k rows of one warp pass
constexpr int kSliceAlign = kWarps * kPassRows;    // 32: a slice is whole passes of every warp
constexpr int64_t kStreamMinSlice = 256;           // k per slice at least
constexpr int kMaxGroups = 16384;                  // column groups that may split (counters below)

// The last-block counters: one per column group, zero between launches (each group's last block
// resets its own). A launch with more groups than this does not split k (it has blocks enough).
__device__ unsigned g_arrivals[kMaxGroups];

// The 4 columns of a row of B (or C) that this lane owns: VecB (n % 4 == 0): col0 + 4 lane .. + 3,
// one 16-byte access; otherwise col0 + lane + 32 q, q < 4 (coalesced 4-byte accesses). Guard: the
// block's columns cross n (zeros past it); without it every column is inside.
template <bool VecB, bool Guard>
__device__ __forceinline__ float4 load_cols(const float* __restrict__ row, int64_t col0, int lane, int64_t n) {
  if constexpr (VecB) {
    const int64_t c = col0 + 4 * lane;
    return !Guard || c < n ? ldg4(row + c) : zero4();
  } else {
    float v[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int64_t c = col0 + lane + 32 * q;
      v[q] = !Guard || c < n ? __ldg(row + c) : 0.f;
    }
    return make_float4(v[0], v[1], v[2], v[3]);
  }
}
template <bool VecB>
__device__ __forceinline__ void store_cols(float* row, int64_t col0, int lane, int64_t n, const float4& v) {
  if constexpr (VecB) {
    const int64_t c = col0 + 4 * lane;
    if (c < n) *reinterpret_cast<float4*>(row + c) = v;
  } else {
    const float s[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int64_t c = col0 + lane + 32 * q;
      if (c < n) row[c] = s[q];
    }
  }
}

// A[i][p .. p+3], the same address in every lane (one broadcast load). Guard: some of the 4 may lie
// at or past k1 (zeros there; p itself is below k1).
template <bool VecA, bool Guard>
__device__ __forceinline__ float4 load_a(const float* __restrict__ a_row, int64_t p, int64_t k1) {
  if constexpr (VecA && !Guard) {
    return ldg4(a_row + p);
  } else {
    return make_float4(__ldg(a_row + p), !Guard || p + 1 < k1 ? __ldg(a_row + p + 1) : 0.f,
                       !Guard || p + 2 < k1 ? __ldg(a_row + p + 2) : 0.f,
                       !Guard || p + 3 < k1 ? __ldg(a_row + p + 3) : 0.f);
  }
}

// acc[i] += A[i][p + q] B[p + q][cols] for the 4 rows q of one pass. Rows i >= m read row m - 1
// again (no branch between the loads: they all issue before the FMAs); their sums are never stored.
template <int MR, bool VecA, bool Guard>
__device__ __forceinline__ void pass_fmas(float4 (&acc)[MR], const float* __restrict__ A, int64_t k, int64_t m,
                                          int64_t p, int64_t k1, const float4 (&b)[kPassRows]) {
  float4 a_all[MR];
#pragma unroll
  for (int i = 0; i < MR; ++i) a_all[i] = load_a<VecA, Guard>(A + (i < m ? i : m - 1) * k, p, k1);
#pragma unroll
  for (int i = 0; i < MR; ++i) {
    const float4 a = a_all[i];
    fma4(acc[i], a.x, b[0]);
    fma4(acc[i], a.y, b[1]);
    fma4(acc[i], a.z, b[2]);
    fma4(acc[i], a.w, b[3]);
  }
}

// Block (x, y): columns [128 x, 128 x + 128) of C, k in slice y: [y k_slice, (y + 1) k_slice).
// MR >= m rows of A and C (rows past m are zeros, never stored). VecA: k % 4 == 0 (16-byte rows of A).
// One slice: the block writes C. Several: its partial rows go to slice y of `partials`, and the
// block that finishes its column group last adds them in slice order into C.
template <int MR, bool VecA, bool VecB>
__global__ void __launch_bounds__(kThreads)
    gemm_stream_b(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                  float* __restrict__ partials, int64_t m, int64_t n, int64_t k, int64_t k_slice,
                  int64_t slice_stride) {
  // Rows of C summed per round of the block's reduction: 2 (4 KB of shared memory per row and round
  // would cost blocks per SM: 8 rows at once, 32 KB, held the m = 8 kernel to one block per SM).
  constexpr int RR = MR < 2 ? MR : 2;
  __shared__ float4 red[kWarps][RR][32];
  __shared__ bool last;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t col0 = int64_t(blockIdx.x) * kGroupCols;
  const int slices = static_cast<int>(gridDim.y);
  const int64_t k0 = int64_t(blockIdx.y) * k_slice;
  const int64_t k1 = k - k0 < k_slice ? k : k0 + k_slice;

  float4 acc[MR];
#pragma unroll
  for (int i = 0; i < MR; ++i) acc[i] = zero4();
  // This warp's passes: rows p .. p+3 of B, p = k0 + 4 warp + 32 j.
  int64_t p = k0 + kPassRows * warp;
  // Step 1: two whole passes at a time, their 8 rows of B loaded before any FMA (8 x 16 bytes in
  // flight per lane, 4 KB per warp), no checks along k; along n only in the last column group.
  auto whole_passes = [&](auto guard) {
    constexpr bool G = decltype(guard)::value;
    for (; p + kSliceAlign + kPassRows <= k1; p += 2 * kSliceAlign) {
      float4 b0[kPassRows], b1[kPassRows];
#pragma unroll
      for (int q = 0; q < kPassRows; ++q) {
        b0[q] = load_cols<VecB, G>(B + (p + q) * n, col0, lane, n);
        b1[q] = load_cols<VecB, G>(B + (p + kSliceAlign + q) * n, col0, lane, n);
      }
      // Step 2: A[i][p .. p+3] for each row i, 16 FMAs per row of A and pass.
      pass_fmas<MR, VecA, false>(acc, A, k, m, p, k1, b0);
      pass_fmas<MR, VecA, false>(acc, A, k, m, p + kSliceAlign, k1, b1);
    }
  };
  if (col0 + kGroupCols <= n) whole_passes(std::false_type{});
  else whole_passes(std::true_type{});
  // The passes left (at most two), rows past k1 as zeros.
  for (; p < k1; p += kSliceAlign) {
    float4 b[kPassRows];
#pragma unroll
    for (int q = 0; q < kPassRows; ++q)
      b[q] = p + q < k1 ? load_cols<VecB, true>(B + (p + q) * n, col0, lane, n) : zero4();
    pass_fmas<MR, VecA, true>(acc, A, k, m, p, k1, b);
  }

  // Step 3: the 8 warps' sums, RR rows of C at a time through shared memory, warp r adding row
  // i0 + r in warp order; into C (one slice) or this slice of the partials.
  float* const out = slices == 1 ? C : partials + int64_t(blockIdx.y) * slice_stride;
#pragma unroll
  for (int i0 = 0; i0 < MR; i0 += RR) {
#pragma unroll
    for (int r = 0; r < RR; ++r) red[warp][r][lane] = acc[i0 + r];
    __syncthreads();
    if (warp < RR && i0 + warp < m) {
      float4 s = red[0][warp][lane];
#pragma unroll
      for (int w = 1; w < kWarps; ++w) add4(s, red[w][warp][lane]);
      store_cols<VecB>(out + (i0 + warp) * n, col0, lane, n, s);
    }
    __syncthreads();
  }
  if (slices == 1) return;

  // Step 4: the last block of this column group adds the slices, in slice order, into C.
  __threadfence();  // this block's partials are visible to every block before it is counted
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(&g_arrivals[blockIdx.x], 1u) == unsigned(slices - 1);
  __syncthreads();
  if (!last) return;
  __threadfence();
  const int64_t cols = n - col0 < kGroupCols ? n - col0 : kGroupCols;
  for (int e = threadIdx.x; e < m * kGroupCols; e += kThreads) {
    const int i = e / kGroupCols, c = e % kGroupCols;
    if (c >= cols) continue;
    const float* src = partials + i * n + col0 + c;
    float s = __ldcg(src);  // from L2: written by other SMs
    int sl = 1;
    for (; sl + 4 <= slices; sl += 4) {  // 4 loads in flight, added in order
      const float v0 = __ldcg(src + sl * slice_stride), v1 = __ldcg(src + (sl + 1) * slice_stride);
      const float v2 = __ldcg(src + (sl + 2) * slice_stride), v3 = __ldcg(src + (sl + 3) * slice_stride);
      s = (((s + v0) + v1) + v2) + v3;
    }
    for (; sl < slices; ++sl) s += __ldcg(src + sl * slice_stride);
    C[i * n + col0 + c] = s;
  }
  if (threadIdx.x == 0) g_arrivals[blockIdx.x] = 0;  // ready for the next launch
}

// ---- n <= 16: stream A ----------------------------------------------------------------------------

constexpr int kDotRows = 2;  // rows of A (and C) per warp

// One chunk of the dot products: lane l's k = p .. p+3 (VecA) or p (scalar) of each of the R rows,
// U chunks 128 (or 32) apart; their loads issue before their FMAs. Guard: chunks may pass k.
template <int NC, bool VecA, int U, bool Guard, int R>
__device__ __forceinline__ void dot_chunks(float (&acc)[R][NC], const float* const (&a_row)[R],
                                           const float* __restrict__ B, int64_t n, int64_t k, int64_t p0) {
  if constexpr (VecA) {
    float4 a[U][R];
    float b[U][4][NC];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t p = p0 + 128 * u;
      const bool in = !Guard || p < k;  // k % 4 == 0: p .. p+3 all in
#pragma unroll
      for (int r = 0; r < R; ++r) a[u][r] = in ? ldg4(a_row[r] + p) : zero4();
      if constexpr (NC == 1) {  // n == 1: B is a vector of k floats, 16-byte aligned at p
        const float4 v = in ? ldg4(B + p) : zero4();
        b[u][0][0] = v.x, b[u][1][0] = v.y, b[u][2][0] = v.z, b[u][3][0] = v.w;
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q)
#pragma unroll
          for (int c = 0; c < NC; ++c) b[u][q][c] = in && c < n ? __ldg(B + (p + q) * n + c) : 0.f;
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const float av[4] = {a[u][r].x, a[u][r].y, a[u][r].z, a[u][r].w};
#pragma unroll
        for (int q = 0; q < 4; ++q)
#pragma unroll
          for (int c = 0; c < NC; ++c) acc[r][c] = fmaf(av[q], b[u][q][c], acc[r][c]);
      }
  } else {
    float a[U][R], b[U][NC];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t p = p0 + 32 * u;
      const bool in = !Guard || p < k;
#pragma unroll
      for (int r = 0; r < R; ++r) a[u][r] = in ? __ldg(a_row[r] + p) : 0.f;
#pragma unroll
      for (int c = 0; c < NC; ++c) b[u][c] = in && c < n ? __ldg(B + p * n + c) : 0.f;
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int c = 0; c < NC; ++c) acc[r][c] = fmaf(a[u][r], b[u][c], acc[r][c]);
  }
}

// Warp w of block x: rows (8 x + w) 2 .. + 1 of C, all n <= NC columns. VecA: k % 4 == 0.
template <int NC, bool VecA>
__global__ void __launch_bounds__(kThreads)
    gemm_dot_rows(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int64_t m,
                  int64_t n, int64_t k) {
  constexpr int R = kDotRows;
  // Chunks in flight per lane: U loads of 16 bytes per row (fewer for wide B: its values take registers).
  constexpr int U = VecA ? (NC >= 8 ? 1 : NC >= 4 ? 2 : 4) : 4;
  constexpr int64_t kStride = (VecA ? 128 : 32) * U;  // k per warp iteration
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t row0 = (int64_t(blockIdx.x) * kWarps + warp) * R;
  if (row0 >= m) return;  // a whole warp: no block-wide barrier below
  bool row_in[R];
  const float* a_row[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    row_in[r] = row0 + r < m;
    a_row[r] = A + (row_in[r] ? row0 + r : row0) * k;  // a row past m reads row0 again, never stored
  }
  float acc[R][NC] = {};
  // Step 1: whole iterations without checks (a warp reads 512 contiguous bytes of a row per load),
  // then the rest of k with them.
  const int64_t lane_k = VecA ? 4 * lane : lane;
  int64_t base = 0;
  for (; base + kStride <= k; base += kStride) dot_chunks<NC, VecA, U, false>(acc, a_row, B, n, k, base + lane_k);
  if (base < k) dot_chunks<NC, VecA, U, true>(acc, a_row, B, n, k, base + lane_k);

  // Step 2: the 32 lanes' sums (a butterfly: every lane ends with the total), lane c writes column c.
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int c = 0; c < NC; ++c) {
      float v = acc[r][c];
#pragma unroll
      for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(kFullMask, v, off);
      if (lane == c && c < n && row_in[r]) C[(row0 + r) * n + c] = v;
    }
}

// ---- few tiles, long k: 64 x 64 tiles in slices ---------------------------------------------------

using SmallTile = WarpTile<64, 64, 16, 32, 32, 8, 4>;  // 4 warps of 32 x 32, 8 x 4 per thread
constexpr int kSmallStages = 3, kSmallMinBlocks = 4;
using SmallSliced = split_k::Sliced<SmallTile, kSmallStages, kSmallMinBlocks>;
constexpr const char* kSmallName = "64x64x16_8x4_w32x32_s3";
constexpr int64_t kSmallMinSlice = 128;  // k per slice at least: 8 k steps of 16

constexpr int kSumCols = 16, kSumLanes = 16;  // the sum's block: 16 float4 of C x 16 lanes along the slices

// C[i] = the sum of partial_s[i] over s: thread (x, y) adds slices y, y + 16, ... of float4 x of its
// block, then lane 0 adds the 16 lanes in order (a fixed order: the same bits every run). The
// count % 4 last elements go one by one, in slice order.
__global__ void __launch_bounds__(kSumCols * kSumLanes)
    sum_slices_wide(const float* __restrict__ partials, float* __restrict__ C, int64_t count, int slices,
                    int64_t slice_stride) {
  __shared__ float4 part[kSumLanes][kSumCols];
  const int x = threadIdx.x % kSumCols, y = threadIdx.x / kSumCols;
  const int64_t quads = count / 4, q = int64_t(blockIdx.x) * kSumCols + x;
  float4 acc = zero4();
  if (q < quads) {
#pragma unroll 4
    for (int s = y; s < slices; s += kSumLanes)
      add4(acc, __ldcg(reinterpret_cast<const float4*>(partials + s * slice_stride) + q));
  }
  part[y][x] = acc;
  __syncthreads();
  if (y == 0 && q < quads) {
    float4 t = part[0][x];
#pragma unroll
    for (int l = 1; l < kSumLanes; ++l) add4(t, part[l][x]);
    reinterpret_cast<float4*>(C)[q] = t;
  }
  if (blockIdx.x == 0 && threadIdx.x < count % 4) {
    const int64_t i = quads * 4 + threadIdx.x;
    float t = partials[i];
    for (int s = 1; s < slices; ++s) t += partials[s * slice_stride + i];
    C[i] = t;
  }
}

// Launches sum_slices_wide on `stream`: C (m x n) = the sum of `slices` partial results in
// `partials`, slice_stride floats apart. Step 11's small-C split-K and tf32_05's TF32 split-K.
void sum_slices(const float* partials, float* C, int64_t m, int64_t n, int64_t slices, int64_t slice_stride,
                cudaStream_t stream) {
  const int64_t count = m * n, quads = count / 4;
  const int64_t blocks = std::max<int64_t>((quads + kSumCols - 1) / kSumCols, 1);
  sum_slices_wide<<<static_cast<unsigned>(blocks), kSumCols * kSumLanes, 0, stream>>>(
      partials, C, count, static_cast<int>(slices), slice_stride);
  CUDA_CHECK_LAUNCH();
}

// ---- The classes ----------------------------------------------------------------------------------

enum class Kind { stream_b, dot_rows, split_small, split_k, pipelined };

struct Plan {
  Kind kind;
  int width = 0;          // stream_b: MR (rows of A per pass); dot_rows: NC (columns of B)
  int per_sm = 0;         // blocks of the chosen kernel per SM
  int64_t blocks = 0;     // stream_b: column groups; split_small: tiles
  int64_t slices = 1, k_slice = 0;
};

// The template argument that covers `extent` (<= 16): 1, 2, 4, 8 or 16.
int width_for(int64_t extent) {
  int w = 1;
  while (w < extent) w *= 2;
  return w;
}

using StreamKernel = void (*)(const float*, const float*, float*, float*, int64_t, int64_t, int64_t, int64_t, int64_t);
using DotKernel = void (*)(const float*, const float*, float*, int64_t, int64_t, int64_t);

template <int MR>
StreamKernel stream_kernel_for(bool vec_a, bool vec_b) {
  return vec_a ? (vec_b ? gemm_stream_b<MR, true, true> : gemm_stream_b<MR, true, false>)
               : (vec_b ? gemm_stream_b<MR, false, true> : gemm_stream_b<MR, false, false>);
}
StreamKernel stream_kernel(int mr, bool vec_a, bool vec_b) {
  switch (mr) {
    case 1: return stream_kernel_for<1>(vec_a, vec_b);
    case 2: return stream_kernel_for<2>(vec_a, vec_b);
    case 4: return stream_kernel_for<4>(vec_a, vec_b);
    case 8: return stream_kernel_for<8>(vec_a, vec_b);
    default: return stream_kernel_for<16>(vec_a, vec_b);
  }
}
DotKernel dot_kernel(int nc, bool vec_a) {
  switch (nc) {
    case 1: return vec_a ? gemm_dot_rows<1, true> : gemm_dot_rows<1, false>;
    case 2: return vec_a ? gemm_dot_rows<2, true> : gemm_dot_rows<2, false>;
    case 4: return vec_a ? gemm_dot_rows<4, true> : gemm_dot_rows<4, false>;
    case 8: return vec_a ? gemm_dot_rows<8, true> : gemm_dot_rows<8, false>;
    default: return vec_a ? gemm_dot_rows<16, true> : gemm_dot_rows<16, false>;
  }
}

// Blocks per SM of a skinny kernel on this GPU (no dynamic shared memory), once per kernel.
int skinny_blocks_per_sm(const ladder::DeviceInfo& dev, const void* kernel) {
  static std::map<const void*, int> known;
  auto it = known.find(kernel);
  if (it != known.end()) return it->second;
  const int blocks = std::max(ladder::blocks_per_sm(dev, kernel, kThreads, 0), 1);
  known[kernel] = blocks;
  return blocks;
}

// S slices of k_slice (a multiple of `align`, the last one shorter) so that blocks x S fill the
// slots without passing them, each slice at least min_slice long.
void split(Plan& p, int64_t slots, int64_t k, int64_t min_slice, int64_t align) {
  p.slices = 1, p.k_slice = k;
  if (p.blocks >= slots) return;
  const int64_t s = std::min(slots / p.blocks, k / min_slice);
  if (s <= 1) return;
  p.k_slice = ((k + s - 1) / s + align - 1) / align * align;
  p.slices = (k + p.k_slice - 1) / p.k_slice;
}

Plan plan(const Gemm& g) {
  const ladder::DeviceInfo& dev = *g.dev;
  Plan p{Kind::pipelined};
  if (g.m <= kSkinny) {
    p.kind = Kind::stream_b;
    p.width = width_for(g.m);
    p.per_sm = skinny_blocks_per_sm(
        dev, reinterpret_cast<const void*>(stream_kernel(p.width, g.k % 4 == 0, g.n % 4 == 0)));
    p.blocks = (g.n + kGroupCols - 1) / kGroupCols;
    if (p.blocks <= kMaxGroups) split(p, int64_t(dev.sm_count) * p.per_sm, g.k, kStreamMinSlice, kSliceAlign);
    return p;
  }
  if (g.n <= kSkinny) {
    p.kind = Kind::dot_rows;
    p.width = width_for(g.n);
    p.per_sm = skinny_blocks_per_sm(dev, reinterpret_cast<const void*>(dot_kernel(p.width, g.k % 4 == 0)));
    p.blocks = (g.m + kWarps * kDotRows - 1) / (kWarps * kDotRows);
    return p;
  }
  Gemm whole = g;
  whole.tile.clear();
  const split_k::Plan ten = split_k::plan(whole);
  if (!ten.tiling) return p;  // waves of tiles: step 09
  const double used = double(g.m) * double(g.n) /
                      (double((g.m + ten.tiling->bm - 1) / ten.tiling->bm * ten.tiling->bm) *
                       double((g.n + ten.tiling->bn - 1) / ten.tiling->bn * ten.tiling->bn));
  if (used >= 0.5) {
    p.kind = Kind::split_k;
    p.slices = ten.split.slices, p.k_slice = ten.split.k_slice;
    return p;
  }
  p.kind = Kind::split_small;
  p.per_sm = SmallSliced::blocks_per_sm(dev);
  if (p.per_sm == 0) {  // cannot happen on a GPU with cp.async (25 KB per block): step 10 then
    p.kind = Kind::split_k;
    p.slices = ten.split.slices, p.k_slice = ten.split.k_slice;
    return p;
  }
  p.blocks = int64_t((g.m + SmallTile::BM - 1) / SmallTile::BM) * ((g.n + SmallTile::BN - 1) / SmallTile::BN);
  split(p, int64_t(dev.sm_count) * p.per_sm, g.k, kSmallMinSlice, SmallTile::BK);
  return p;
}

void run_split_small(const Gemm& g, const Plan& p) {
  SmallSliced::configure(*g.dev);
  const TileGrid grid = tile_grid(g.m, g.n, SmallTile::BM, SmallTile::BN);
  const int64_t stride = split_k::slice_stride(g.m, g.n);
  float* const out = p.slices == 1 ? g.C : static_cast<float*>(g.workspace);
  auto kernel = g.n % 4 == 0 ? split_k::sgemm_split_k<SmallTile, kSmallStages, kSmallMinBlocks, true>
                             : split_k::sgemm_split_k<SmallTile, kSmallStages, kSmallMinBlocks, false>;
  kernel<<<dim3(grid.blocks, static_cast<unsigned>(p.slices)), SmallTile::THREADS, SmallSliced::kSmem, g.stream>>>(
      g.A, g.B, out, g.m, g.n, g.k, p.k_slice, stride, grid.tiles_n);
  CUDA_CHECK_LAUNCH();
  if (p.slices > 1) sum_slices(out, g.C, g.m, g.n, p.slices, stride, g.stream);
}

constexpr const char* kId = "sgemm/11_shape_classes";

size_t workspace_bytes(const Gemm& g) {
  const Plan p = plan(g);
  switch (p.kind) {
    case Kind::stream_b:
    case Kind::split_small:
      return p.slices == 1 ? 0 : static_cast<size_t>(p.slices * split_k::slice_stride(g.m, g.n)) * sizeof(float);
    case Kind::split_k: {
      Gemm whole = g;
      whole.tile.clear();
      return split_k::workspace_bytes(whole);
    }
    default:
      return 0;
  }
}

void launch(const Gemm& g) {
  const Plan p = plan(g);
  switch (p.kind) {
    case Kind::stream_b: {
      auto kernel = stream_kernel(p.width, g.k % 4 == 0, g.n % 4 == 0);
      kernel<<<dim3(static_cast<unsigned>(p.blocks), static_cast<unsigned>(p.slices)), kThreads, 0, g.stream>>>(
          g.A, g.B, g.C, static_cast<float*>(g.workspace), g.m, g.n, g.k, p.k_slice,
          split_k::slice_stride(g.m, g.n));
      CUDA_CHECK_LAUNCH();
      return;
    }
    case Kind::dot_rows: {
      auto kernel = dot_kernel(p.width, g.k % 4 == 0);
      kernel<<<static_cast<unsigned>(p.blocks), kThreads, 0, g.stream>>>(g.A, g.B, g.C, g.m, g.n, g.k);
      CUDA_CHECK_LAUNCH();
      return;
    }
    case Kind::split_small:
      return run_split_small(g, p);
    case Kind::split_k:
      return split_k::launch(g);
    case Kind::pipelined:
      return pipelined::launch(g);
  }
}

std::string describe(const Gemm& g) {
  const Plan p = plan(g);
  const std::string sms = std::to_string(g.dev->sm_count) + " SMs x " + std::to_string(p.per_sm) + " blocks";
  const std::string cut = p.slices == 1 ? std::string(", k whole")
                                        : ", k in " + std::to_string(p.slices) + " slices of " + std::to_string(p.k_slice);
  switch (p.kind) {
    case Kind::stream_b:
      return "skinny m (m = " + std::to_string(g.m) + " <= " + std::to_string(kSkinny) +
             "): gemm_stream_b, B read once, " + std::to_string(p.width) + " row(s) of A per pass, " +
             std::to_string(p.blocks) + " column groups of 128" + cut + " (" + sms + ")";
    case Kind::dot_rows:
      return "skinny n (n = " + std::to_string(g.n) + " <= " + std::to_string(kSkinny) +
             "): gemm_dot_rows, A read once, 2 rows per warp, " + std::to_string(p.width) + " column(s) of B, " +
             std::to_string(p.blocks) + " blocks (" + sms + ")";
    case Kind::split_small:
      return "few tiles, long k, small C: " + std::string(kSmallName) + " split-K, " + std::to_string(p.blocks) +
             " tiles of 64x64" + cut + " (" + sms + "), partials summed 16 lanes per output";
    case Kind::split_k:
      return "few tiles, long k: step 10's " + split_k::describe([&] {
               Gemm whole = g;
               whole.tile.clear();
               return whole;
             }());
    case Kind::pipelined:
      return "waves of tiles: step 09's " + pipelined::describe(g);
  }
  return "";
}

const Step kStep{kId, launch, nullptr, /*tunable=*/false, workspace_bytes, describe};
LADDER_STEP(kStep);

}  // namespace sgemm::shape_classes
