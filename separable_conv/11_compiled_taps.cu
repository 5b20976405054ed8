// separable_conv step 11: K known at compile time — the taps become instruction operands, the filters
// straight-line code.
// Step 10 moves the bytes once, but Nsight Compute shows its SMs issuing an instruction in 72-75%
// of their cycles, and only 40% (K = 17) to 47% (K = 31) of those instructions are the FMAs the
// convolution needs: 85 instructions per pixel for 34 FMAs at K = 17, 134 for 62 at K = 31. The
// rest is the K-generic machinery — the chunk loops and their counters, the ring of window
// registers and the code that turns it back, the 1- or 3-tap tail, one shared-memory load of taps
// per chunk — and the staging of each group of rows (64-bit bounds and a general loop per row for
// one or two copies per lane). Here the kernel is compiled once for each odd K from 3 to 31:
//  * the taps live in __constant__ memory and every tap index is a compile-time constant, so each
//    FMA takes its tap from the constant bank as an operand (ptxas: ULDC into uniform registers,
//    FFMA R, R, UR, R): no tap loads from shared memory, no tap registers per thread;
//  * the row filter of a lane is one straight run over its window: (S + K + 2) / 4 + 1 float4
//    loads per row (S = 0-3, the row's offset in its 16-byte piece, still compiled for each S) and
//    4K FMAs per row; no loop, no ring, no tail;
//  * the column filter slides down the P rows of a thread in one run: each of the P + K - 1 rows it
//    reads is loaded once and feeds the P outputs that need it, each with its own constant tap.
//  * widths that are not a multiple of 4 (4-byte stores, a warp writing 32 consecutive floats):
//    step 10's column pass read each row result with four 4-byte shared loads to get a lane the
//    columns l, l + 32, l + 64, l + 96; here the row pass writes them there (four 4-byte shared
//    stores once per row, through an XOR swizzle without bank conflicts) and the column pass
//    reads one float4 per row, as for the other widths;
//  * the groups after the first are copied with per-block row, column and index arithmetic (one
//    test per row, one or two 16-byte copies per lane), and a tile's rows are stored with one
//    index stepping by the width, without column tests except in the last strip.
// Everything else is step 10's: the strips and segments, the cp.async groups and their waits, the
// mid rows kept for the next tile. Nsight Compute at the bar sizes: 61 and 99 instructions per
// pixel instead of 85 and 134 (the chapter's table).
// Changes from step 10: a kernel per K (3 ... 31); taps in __constant__ memory; unrolled filters;
// swizzled row results for odd widths; per-block staging arithmetic; strength-reduced stores.
// Costs: 15 x 2 kernels (odd K up to 31, float4 and 4-byte stores) and a longer build; code
// that grows with K (a row filter of about 4K FMAs for each of the four offsets S). Any other K
// (1, 33 ... 127) runs step 10's K-generic kernel, and the record's `choice` says which ran.
// Source: beyond the posts; templated kernels with compile-time loop bounds and __constant__
// operands: CUDA C++ Programming Guide (constant memory; #pragma unroll).
// Run: build/bin/separable_conv_11_compiled_taps [--taps 17]
#include "10_strip_pipeline.cu"  // the strip pass: staging, segments, occupancy; its K-generic kernel

#include <string>
#include <utility>

namespace separable_conv::compiled_taps {

using register_blocked::kLanes;
using register_blocked::kTileW;
using strip_pipeline::kGroupRows;

constexpr int kMinCompiledTaps = 3, kMaxCompiledTaps = 31;  // odd K in between have a kernel
__constant__ float c_row_taps[kMaxCompiledTaps];
__constant__ float c_col_taps[kMaxCompiledTaps];

// The one shape: step 10's default, 8 warps, P = 4 (a 128 x 32 tile), 2 cp.async stages, ptxas
// asked for 3 resident blocks per SM.
constexpr int kWarps = 8, kP = 4, kStages = 2, kMinBlocks = 3;
constexpr int kTileH = kWarps * kP;
static_assert(kTileH % kGroupRows == 0, "a tile's rows end a group");

// Floats per staged input row (step 10's layout(K).pitch): S + 128 + K - 1 for any S <= 3.
constexpr int pitch_of(int k) { return 4 * ((k + 130 + 3) / 4); }

// Step 10's stage_group with the row length known: input rows y0 .. y0 + rows - 1 (rows <= 32)
// into buf, row y from column cs = x0 - R - S(y), zeros outside the image. Warp w copies rows w,
// w + 8, w + 16, w + 24; its lanes take consecutive 16-byte pieces. Step 10 worked out each row's
// start and bounds in 64-bit arithmetic and ran a general loop over a row's pieces (about 75
// instructions per row and warp for one or two copies per lane: a quarter of all it issued). Here
// the row's element index steps by 8 rows, the piece loop has a fixed trip count (pitch / 4 /
// 32, rounded up) and one test per row decides whether the row is wholly inside the image; only
// rows that are not (the image's first and last K / 2 rows, the first and last strip) take step
// 10's piece-by-piece path.
template <int K>
__device__ __forceinline__ void stage_group(float* buf, const float* __restrict__ in, int64_t y0, int rows, int64_t x0,
                                            int64_t width, int64_t height, int lane, int warp) {
  constexpr int kR = K / 2, kPitch = pitch_of(K), kPieces = kPitch / 4;
  constexpr int kIters = (kPieces + kLanes - 1) / kLanes;
  static_assert(kGroupRows % kWarps == 0 && kWarps % 4 == 0, "a warp's rows share their offset S");
  const int64_t cs = x0 - kR - strip_pipeline::row_offset(in, y0 + warp, x0 - kR, width);
  const bool columns_inside = cs >= 0 && cs + kPitch <= width;
  int64_t at = (y0 + warp) * width + cs + 4 * lane;  // this lane's first float of row y0 + i
#pragma unroll
  for (int k = 0; k < kGroupRows / kWarps; ++k, at += kWarps * width) {
    const int i = warp + k * kWarps;
    if (i >= rows) break;  // warp-uniform
    const int64_t y = y0 + i;
    float* dst = buf + i * kPitch;
    const bool row_inside = y >= 0 && y < height;
    if (columns_inside && row_inside) {
#pragma unroll
      for (int m = 0; m < kIters; ++m)
        if (lane + kLanes * m < kPieces) ladder::cp_async_16(dst + 4 * (lane + kLanes * m), in + at + 4 * kLanes * m);
      continue;
    }
    for (int c = lane; c < kPieces; c += kLanes) {  // step 10's path for pieces at or over a border
      const int64_t x = cs + 4 * c;
      float* d = dst + 4 * c;
      if (row_inside && x >= 0 && x + 4 <= width) {
        ladder::cp_async_16(d, in + y * width + x);
      } else if (!row_inside || x + 4 <= 0 || x >= width) {
        *reinterpret_cast<float4*>(d) = make_float4(0.f, 0.f, 0.f, 0.f);
      } else {
        for (int e = 0; e < 4; ++e) {
          if (x + e >= 0 && x + e < width) ladder::cp_async_4(d + e, in + y * width + x + e);
          else d[e] = 0.f;
        }
      }
    }
  }
}

// The copies of a group after the first, in a strip whose staged columns lie inside the image:
// 32 rows, warp w's rows w + 8k at image rows y + 8k, this lane's first float of row y at element
// `at`. Those rows are 32 rows (a multiple of 4) below the previous group's, so they start at the
// same offset S and the kernel works out y, the columns and `at` once per block; a row is copied
// whole (two 16-byte copies per lane at most) or, above or below the image, zeroed.
template <int K>
__device__ __forceinline__ void stage_group_inside(float* buf, const float* __restrict__ in, int64_t y, int64_t at,
                                                   int64_t width, int64_t height, int lane, int warp) {
  constexpr int kPitch = pitch_of(K), kPieces = kPitch / 4;
  constexpr int kIters = (kPieces + kLanes - 1) / kLanes;
  static_assert(kPieces > kLanes, "every lane has a first piece");
  float* dst = buf + warp * kPitch + 4 * lane;
#pragma unroll
  for (int k = 0; k < kGroupRows / kWarps; ++k, y += kWarps, at += kWarps * width, dst += kWarps * kPitch) {
    if (static_cast<uint64_t>(y) < static_cast<uint64_t>(height)) {
      const float* src = in + at;
#pragma unroll
      for (int m = 0; m < kIters; ++m)
        if (m == 0 || lane + kLanes * m < kPieces) ladder::cp_async_16(dst + 4 * kLanes * m, src + 4 * kLanes * m);
    } else {
#pragma unroll
      for (int m = 0; m < kIters; ++m)
        if (m == 0 || lane + kLanes * m < kPieces)
          *reinterpret_cast<float4*>(dst + 4 * kLanes * m) = make_float4(0.f, 0.f, 0.f, 0.f);
    }
  }
}

// Four adjacent outputs per lane of two staged rows that start kS floats into their first float4:
// out[q] = sum_{j<K} c_row_taps[j] * row[4 lane + kS + q + j]. The window's float4s are loaded in
// order; each feeds the FMAs of the taps that reach it, taps ascending per output.
template <int K, int kS>
__device__ __forceinline__ void row_filter_pair(const float* row0, const float* row1, int lane, float4& o0,
                                                float4& o1) {
  constexpr int kWindow = (kS + K + 2) / 4 + 1;  // float4s holding elements kS .. kS + K + 2
  const float4* w0 = reinterpret_cast<const float4*>(row0) + lane;
  const float4* w1 = reinterpret_cast<const float4*>(row1) + lane;
  float a[4] = {0.f, 0.f, 0.f, 0.f}, b[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
  for (int p = 0; p < kWindow; ++p) {
    const float4 u = w0[p], v = w1[p];
    const float eu[4] = {u.x, u.y, u.z, u.w}, ev[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int m = 0; m < 4; ++m)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int j = 4 * p + m - kS - q;  // the tap that meets element 4p + m for output q
        if (j >= 0 && j < K) {
          a[q] = fmaf(c_row_taps[j], eu[m], a[q]);
          b[q] = fmaf(c_row_taps[j], ev[m], b[q]);
        }
      }
  }
  o0 = make_float4(a[0], a[1], a[2], a[3]);
  o1 = make_float4(b[0], b[1], b[2], b[3]);
}

// Where the row results go in a mid row of 128 floats. kVec = 4: column c at c (lane l's float4
// holds its own 4 columns). kVec = 1: the 4-byte stores want lane l to hold columns l, l + 32,
// l + 64, l + 96 (so that a warp's store covers 32 consecutive floats), and step 10 gathered them
// with four 4-byte shared loads per row read. Here the row pass scatters them instead: column c
// goes to float4 slot swizzle(c % 32), component c / 32, so that the column pass gets them with
// one 16-byte load. The XOR keeps both sides free of bank conflicts: a quarter-warp reading slots
// 8j .. 8j + 7 and the 8 slots 4k + q (k < 8) one scatter store writes each cover all 32 banks.
__device__ __forceinline__ int swizzle(int slot) { return slot ^ (slot >> 3); }

template <int kVec>
__device__ __forceinline__ void store_row_result(float* row, float4 v, int lane) {
  if constexpr (kVec == 4) {
    reinterpret_cast<float4*>(row)[lane] = v;
  } else {
    const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int c = 4 * lane + q;
      row[4 * swizzle(c % 32) + c / 32] = e[q];
    }
  }
}

// Step 10's row pass of one staged group, with the fixed-K filter: warp w filters rows w, w +
// kWarps, .. in pairs; all rows of a warp share the offset s (a multiple of 4 rows apart).
template <int K, int kVec>
__device__ __forceinline__ void row_filter_group(const float* buf, int rows, float* dst, int s, int lane, int warp) {
  constexpr int kPitch = pitch_of(K);
  for (int i = warp; i < rows; i += 2 * kWarps) {
    const int i1 = i + kWarps < rows ? i + kWarps : i;  // a lone last row is filtered twice, stored once
    const float* r0 = buf + i * kPitch;
    const float* r1 = buf + i1 * kPitch;
    float4 o0, o1;
    switch (s) {
      case 0: row_filter_pair<K, 0>(r0, r1, lane, o0, o1); break;
      case 1: row_filter_pair<K, 1>(r0, r1, lane, o0, o1); break;
      case 2: row_filter_pair<K, 2>(r0, r1, lane, o0, o1); break;
      default: row_filter_pair<K, 3>(r0, r1, lane, o0, o1); break;
    }
    store_row_result<kVec>(dst + i * kTileW, o0, lane);
    if (i1 != i) store_row_result<kVec>(dst + i1 * kTileW, o1, lane);
  }
}

// kP outputs down a lane's 4 columns of the row results (rows 128 floats apart): acc[p] =
// sum_{j<K} c_col_taps[j] * tile[row0 + p + j]. Rows row0 .. row0 + kP + K - 2, each loaded once
// (one 16-byte load: the lane's slot, store_row_result's layout), in order; row i feeds output p
// with tap i - p.
template <int K, int kVec>
__device__ __forceinline__ void column_filter(const float* tile, int row0, int lane, float4 (&acc)[kP]) {
  const int slot = kVec == 4 ? lane : swizzle(lane);
#pragma unroll
  for (int p = 0; p < kP; ++p) acc[p] = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int i = 0; i < K + kP - 1; ++i) {
    const float4 v = reinterpret_cast<const float4*>(tile + (row0 + i) * kTileW)[slot];
#pragma unroll
    for (int p = 0; p < kP; ++p)
      if (i - p >= 0 && i - p < K) register_blocked::fma4(acc[p], c_col_taps[i - p], v);
  }
}

// The kP output rows y .. of a lane's 4 columns (step 08's store_columns: float4, or 4-byte stores
// at columns l + 32 q), where they exist. The row index steps by `width`; in every strip but the
// last the columns need no test.
template <int kVec>
__device__ __forceinline__ void store_tile(float* __restrict__ out, int64_t y, int64_t x0, int64_t width, int64_t height,
                                           const float4 (&acc)[kP], int lane) {
  const bool full = x0 + kTileW <= width;  // block-uniform
  int64_t at = y * width + x0;
#pragma unroll
  for (int p = 0; p < kP; ++p, at += width) {
    if (y + p >= height) break;  // warp-uniform
    if (!full) {
      register_blocked::store_columns<kVec>(out + at - x0, x0, width, acc[p], lane);
    } else if constexpr (kVec == 4) {
      __stcs(reinterpret_cast<float4*>(out + at) + lane, acc[p]);
    } else {
      __stcs(out + at + lane, acc[p].x);
      __stcs(out + at + lane + 32, acc[p].y);
      __stcs(out + at + lane + 64, acc[p].z);
      __stcs(out + at + lane + 96, acc[p].w);
    }
  }
}

// Step 10's strip_pipeline_pass with K a template parameter and the filters above; the taps come
// from __constant__ memory (load_taps), so shared memory holds only the mid rows and the stages.
template <int K, int kVec>
__global__ void __launch_bounds__(kWarps * kLanes, kMinBlocks)
compiled_taps_pass(const float* __restrict__ in, float* __restrict__ out, int64_t width, int64_t height,
                   int64_t seg_rows) {
  constexpr int kThreads = kWarps * kLanes;
  constexpr int kR = K / 2, kPitch = pitch_of(K), kMidRows = kTileH + K - 1;
  extern __shared__ float4 smem[];
  const int lane = threadIdx.x, warp = threadIdx.y;
  float* mid = reinterpret_cast<float*>(smem);  // row results: mid row m holds input row off + m
  float* stage = mid + kMidRows * kTileW;       // kStages buffers of 32 staged input rows

  const int64_t x0 = int64_t(blockIdx.x) * kTileW;
  const int64_t ya = int64_t(blockIdx.y) * seg_rows, y_in = ya - kR;  // first output row, first input row
  const int64_t tiles = ceil_div(std::min(seg_rows, height - ya), kTileH);
  constexpr int kLead = (K - 1) % kGroupRows != 0 ? (K - 1) % kGroupRows : kGroupRows;  // rows of group 0
  const int64_t groups = 1 + (tiles * kTileH + K - 1 - kLead) / kGroupRows;
  auto first_row = [&](int64_t g) -> int64_t { return g == 0 ? 0 : kLead + (g - 1) * kGroupRows; };
  auto rows_of = [&](int64_t g) -> int { return g == 0 ? kLead : kGroupRows; };
  auto buffer = [&](int64_t g) { return stage + static_cast<int>(g % kStages) * kGroupRows * kPitch; };
  // Groups 1, 2, ..: this warp's first row of group 1, its first column, and whether the staged
  // columns are inside the image (every strip but the first and the last).
  const int64_t y1 = y_in + kLead + warp;
  const int64_t cs1 = x0 - kR - strip_pipeline::row_offset(in, y1, x0 - kR, width);
  const bool inside1 = cs1 >= 0 && cs1 + kPitch <= width;
  // Every thread commits one group per call, empty past the end, so the counts stay in step.
  auto issue = [&](int64_t g) {
    if (g < groups) {
      if (g > 0 && inside1) {
        const int64_t y = y1 + (g - 1) * kGroupRows;
        stage_group_inside<K>(buffer(g), in, y, y * width + cs1 + 4 * lane, width, height, lane, warp);
      } else {
        stage_group<K>(buffer(g), in, y_in + first_row(g), rows_of(g), x0, width, height, lane, warp);
      }
    }
    ladder::cp_async_commit();
  };

  for (int g = 0; g < kStages - 1; ++g) issue(g);
  int64_t tile = 0;  // the next output tile
  int64_t off = 0;   // the input row in mid row 0
  for (int64_t g = 0; g < groups; ++g) {
    // Step 1: ask for group g + kStages - 1, then wait for group g.
    issue(g + kStages - 1);
    ladder::cp_async_wait<kStages - 1>();
    __syncthreads();
    // Step 2: the row pass of group g, into the mid rows after those already there.
    const int64_t u0 = first_row(g);
    const int n = rows_of(g);
    const int s = strip_pipeline::row_offset(in, y_in + u0 + warp, x0 - kR, width);
    row_filter_group<K, kVec>(buffer(g), n, mid + (u0 - off) * kTileW, s, lane, warp);
    __syncthreads();
    // Step 3: when the rows of the next tile are complete, its column pass and stores.
    const int64_t filled = u0 + n;
    if (filled != (tile + 1) * kTileH + K - 1) continue;
    float4 acc[kP];
    column_filter<K, kVec>(mid, static_cast<int>(tile * kTileH - off) + warp * kP, lane, acc);
    store_tile<kVec>(out, ya + tile * kTileH + warp * kP, x0, width, height, acc, lane);
    ++tile;
    // Step 4: move the K - 1 rows the next tile shares with this one to the top of the buffer
    // (step 10: the thread that overwrites a float4 is the one that read it).
    if (tile < tiles && filled - off + kTileH > kMidRows) {
      __syncthreads();  // every warp is done reading the rows about to be overwritten
      const int from = static_cast<int>(tile * kTileH - off), live = static_cast<int>(filled - tile * kTileH);
      float4* m4 = reinterpret_cast<float4*>(mid);
      for (int i = warp * kLanes + lane; i < live * (kTileW / 4); i += kThreads) m4[i] = m4[from * (kTileW / 4) + i];
      off = tile * kTileH;
    }
  }
}

template <int K, int kVec>
struct CompiledPass {
  static const void* kernel() { return reinterpret_cast<const void*>(compiled_taps_pass<K, kVec>); }
  static void launch(const Args& a) {
    const size_t bytes = sizeof(float) * (static_cast<size_t>(kTileH + K - 1) * kTileW +
                                          static_cast<size_t>(kStages) * kGroupRows * pitch_of(K));
    ladder::require_shared_memory(kernel(), bytes, *a.dev, "the compiled-taps pass");
    const int per_sm = strip_pipeline::resident_per_sm(*a.dev, kernel(), kWarps * kLanes, bytes);
    if (per_sm < 1)
      throw ladder::UsageError("the compiled-taps pass does not fit an SM of this GPU (" + a.dev->name + ") with " +
                               std::to_string(bytes) + " bytes of shared memory per block");
    const strip_pipeline::Segments seg = strip_pipeline::segments(a.width, a.height, kTileH, int64_t(per_sm) * a.dev->sm_count);
    compiled_taps_pass<K, kVec><<<dim3(seg.strips, seg.count), dim3(kLanes, kWarps), bytes, a.stream>>>(
        a.in, a.out, a.width, a.height, seg.rows);
    CUDA_CHECK_LAUNCH();
    if (a.choice)
      *a.choice = "K = " + std::to_string(K) + " compiled in: taps as constant-bank operands; 128x32_p4, " +
                  std::to_string(per_sm) + (per_sm == 1 ? " block" : " blocks") + " of 8 warps per SM (" + std::to_string(bytes) +
                  " B of shared memory each), " + std::to_string(seg.strips) + " strips x " +
                  std::to_string(seg.count) + " segments";
  }
};

// Launches the kernel compiled for K = a.taps if there is one (a fold over the odd K from 3 to 31).
template <int kVec, int... Ks>
bool launch_compiled(const Args& a, std::integer_sequence<int, Ks...>) {
  return ((a.taps == 2 * Ks + kMinCompiledTaps ? (CompiledPass<2 * Ks + kMinCompiledTaps, kVec>::launch(a), true) : false) ||
          ...);
}
using CompiledTaps = std::make_integer_sequence<int, (kMaxCompiledTaps - kMinCompiledTaps) / 2 + 1>;

bool compiled(int k) { return k >= kMinCompiledTaps && k <= kMaxCompiledTaps && k % 2 == 1; }

void load_taps(const Args& a) {
  if (!compiled(a.taps)) return;  // step 10's kernel reads a.row_taps and a.col_taps itself
  const size_t bytes = sizeof(float) * a.taps;
  CUDA_CHECK(cudaMemcpyToSymbolAsync(c_row_taps, a.row_taps, bytes, 0, cudaMemcpyDeviceToDevice, a.stream));
  CUDA_CHECK(cudaMemcpyToSymbolAsync(c_col_taps, a.col_taps, bytes, 0, cudaMemcpyDeviceToDevice, a.stream));
}

void launch(const Args& a) {
  ladder::require_compute_capability(*a.dev, ladder::kCpAsyncMajor, ladder::kCpAsyncMinor, "cp.async");
  if (!compiled(a.taps)) {
    // No kernel for this K: step 10's K-generic one, with its own tile rule.
    Args generic = a;
    generic.tile = "auto";
    strip_pipeline::launch(generic);
    if (a.choice)
      *a.choice = "K = " + std::to_string(a.taps) + " has no compiled kernel (odd K " + std::to_string(kMinCompiledTaps) +
                  " to " + std::to_string(kMaxCompiledTaps) + " do): step 10's K-generic kernel, " + *a.choice;
    return;
  }
  if (a.width % 4 == 0 && register_blocked::aligned16(a.out)) launch_compiled<4>(a, CompiledTaps{});
  else launch_compiled<1>(a, CompiledTaps{});
}

const Step kStep{"separable_conv/11_compiled_taps", launch,
                 "step 10's strip pass compiled for each odd K from 3 to 31: taps as constant-bank FMA operands, "
                 "row and column filters unrolled; other K: step 10's kernel",
                 load_taps, Transfers::none, "", /*intermediate=*/false};
LADDER_STEP(kStep);

}  // namespace separable_conv::compiled_taps
