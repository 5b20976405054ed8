// separable_conv step 11: K known at compile time — the taps become instruction operands, the filters
// straight-line code, every shared-memory address a constant.
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
//    loads per row (S = 0-3, the row's offset in its float4, still compiled for each S) and 4K
//    FMAs per row; no loop, no ring, no tail;
//  * each row is copied from the start of the 32-byte sector that holds its first column, not of
//    the 16-byte piece: a 16-byte copy that starts in the middle of a sector costs the L2 an extra
//    request (step 13 at a width of 8196, where every other row starts mid-sector: 46% more L2 read
//    requests, 71% of the floor against 77-78% at 8192 and 8200). A row then starts 0-7 floats into
//    its staged copy; the filter compiled for that offset mod 4 reads from a float4 further on where
//    it is 4 or more. 8191^2: 68% -> 69-71% of the floor at K = 31, 71% -> 72-73% at K = 17;
//  * the column filter slides down the P rows of a thread in one run: each of the P + K - 1 rows it
//    reads is loaded once and feeds the P outputs that need it, each with its own constant tap.
//  * widths that are not a multiple of 4 (4-byte stores, a warp writing 32 consecutive floats):
//    step 10's column pass read each row result with four 4-byte shared loads to get a lane the
//    columns l, l + 32, l + 64, l + 96; here the row pass writes them there (four 4-byte shared
//    stores once per row, through an XOR swizzle without bank conflicts) and the column pass
//    reads one float4 per row, as for the other widths; and there the row pass keeps its pairs of
//    rows in a loop instead of unrolled: such widths run all four offsets S at once, and eight
//    copies of the row filter were more code than the SM's instruction caches keep (8191^2, K = 31:
//    2.33 stalls per issued instruction waiting for instructions, 61% of the floor; rolled: 0.20
//    and 68%);
//  * with K - 1 < 32 every group of rows after the first completes one tile, so the rows kept in
//    shared memory sit at the same place for every tile: the row pass of a group is one unrolled
//    run (the offset S switched on once per group), the column pass and the stores read and write
//    at a base the block keeps plus constants, and the K - 1 rows the next tile shares are moved
//    by the warps about to overwrite them, which takes a barrier per group out of step 10's three;
//  * the groups after the first are copied with row, column and index arithmetic worked out once
//    per block, behind one test per group and warp — in the border strips too, where a piece that
//    reaches past the row's end is copied whole and its floats outside the row zeroed after it lands.
//    All blocks are resident at once (one wave), so the slowest sets the kernel's time: with step
//    10's piece-by-piece path for the border strips, the busiest SM sub-partition issued 1.3x the
//    mean number of instructions, here 1.06x;
//  * a tile's rows are stored with one index stepping by the width, without row or column tests
//    except in the image's last tile and last strip.
// Everything else is step 10's: the strips and segments, the cp.async groups and their waits.
// Nsight Compute at the bar sizes: 48 and 83 instructions per pixel instead of 85 and 134 (the
// chapter's table).
// Changes from step 10: a kernel per K (3 ... 31); taps in __constant__ memory; unrolled filters;
// swizzled row results for odd widths; fixed shared-memory layout, two barriers per group;
// per-block staging arithmetic for every strip; strength-reduced stores.
// Costs: 15 x 2 kernels (odd K up to 31, float4 and 4-byte stores) and a longer build; 4 floats
// more a staged row (1 KB of shared memory a block: 74,752 bytes at K = 31, three blocks an SM
// still); code that grows with K (a row filter of about 4K FMAs for each of the four offsets S);
// 64-72 registers a thread on widths a multiple of 4 (72 at K = 17, 64 at K = 31; step 10: 80), 80
// on the others (ptxas 13.0, sm_90). Any other K (1, 33 ... 127) runs step 10's K-generic kernel,
// and the record's `choice` says which ran.
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
static_assert(kMinCompiledTaps == 3 && kMaxCompiledTaps == 31, "launch() names the compiled K: \"odd K 3 to 31\"");
// Sized for any K: step 12 compiles the same filters for longer K and loads its taps here too.
__constant__ float c_row_taps[kMaxTaps];
__constant__ float c_col_taps[kMaxTaps];

// The one shape: step 10's default, 8 warps, P = 4 (a 128 x 32 tile), 2 cp.async stages, ptxas
// asked for 3 resident blocks per SM.
constexpr int kWarps = 8, kP = 4, kStages = 2, kMinBlocks = 3;
constexpr int kTileH = kWarps * kP;
static_assert(kTileH % kGroupRows == 0, "a tile's rows end a group");

// Floats per staged input row (step 10's layout(K).pitch): S + 128 + K - 1 for any S <= 3, a row
// copied from the 16-byte piece that holds its first column (step 12's own kernels).
constexpr int pitch_of(int k) { return 4 * ((k + 130 + 3) / 4); }
// This step's: S + 128 + K - 1 for any S <= 7, a row copied from its 32-byte sector.
constexpr int sector_pitch_of(int k) { return 4 * ((k + 134 + 3) / 4); }

// The offset S of element (y, x) of img in its 32-byte sector, 0 .. 7 floats. Rows a multiple of 8
// apart share it.
__device__ __forceinline__ int sector_offset(const float* img, int64_t y, int64_t x, int64_t width) {
  return strip_pipeline::row_offset<8>(img, y, x, width);
}

// Step 10's stage_group with the row length known, for a segment's first group (the K - 1 rows
// above its first tile; NextGroups below copies the others): input rows y0 .. y0 + rows - 1 into
// buf, row y from column cs = x0 - R - S(y) (S its sector_offset), zeros outside the image. Warp w
// copies rows w, w + 8, w + 16, w + 24; its lanes take consecutive 16-byte pieces. Step 10 worked
// out each row's start and bounds in 64-bit arithmetic and ran a general loop over a row's pieces
// (about 75 instructions per row and warp for one or two copies per lane: a quarter of all it
// issued). Here the row's element index steps by 8 rows, the piece loop has a fixed trip count
// (pitch / 4 / 32, rounded up) and one test per row decides whether the row is wholly inside the
// image; only rows that are not (the image's first K / 2 rows, the first and last strip) take step
// 10's piece-by-piece path.
template <int K>
__device__ __forceinline__ void stage_group(float* buf, const float* __restrict__ in, int64_t y0, int rows, int64_t x0,
                                            int64_t width, int64_t height, int lane, int warp) {
  constexpr int kR = K / 2, kPitch = sector_pitch_of(K), kPieces = kPitch / 4;
  constexpr int kIters = (kPieces + kLanes - 1) / kLanes;
  static_assert(kGroupRows % kWarps == 0 && kWarps % 8 == 0, "a warp's rows share their offset S");
  const int64_t cs = x0 - kR - sector_offset(in, y0 + warp, x0 - kR, width);
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

// This lane's copies of the groups after the first. Those groups are 32 rows (a multiple of 4)
// apart, so a warp's rows in every one of them start at the same offset S and the same first
// column: which of the lane's 16-byte pieces exist and which of their floats lie inside a row are
// worked out once per block, and only the row index and the element index `at` step from one
// group to the next.
// kStagedPitch: the floats between staged rows (step 13 pads its rows further).
template <int K, int kStagedPitch = pitch_of(K)>
struct NextGroups {
  static constexpr int kPitch = kStagedPitch, kPieces = kPitch / 4, kIters = (kPieces + kLanes - 1) / kLanes;
  static constexpr int kRows = kGroupRows / kWarps;  // rows per warp and group: w, w + 8, ..
  static_assert(kPieces > kLanes && 4 * kIters <= 32, "every lane has a first piece; the masks fit 32 bits");
  int64_t y;       // image row of this warp's first row in the next group
  int64_t at;      // element of `in`: this lane's first float of that row
  int inside;      // warp-uniform: every staged column of this warp's rows lies inside the image
  unsigned masks;  // piece m: bits 4m .. 4m + 3, which of its floats lie inside a row

  __device__ NextGroups(int64_t y1, int64_t cs, int64_t width, int lane)
      : y(y1), at(y1 * width + cs + 4 * lane), inside(cs >= 0 && cs + kPitch <= width), masks(0) {
#pragma unroll
    for (int m = 0; m < kIters; ++m)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t x = cs + 4 * (lane + kLanes * m) + e;
        if (x >= 0 && x < width) masks |= 1u << (4 * m + e);
      }
    // Kept in registers: without this ptxas works both out again from the row offset in every
    // group and row (some 18 instructions per group and warp inside, a few hundred at the borders).
    asm volatile("" : "+r"(inside), "+r"(masks));
  }

  // Issues the copies of the next group into buf and steps to the one after. Warp w copies rows
  // w + 8k (k < 4), each lane one or two 16-byte pieces per row, behind one test per group: that
  // the four rows are inside the image and the pieces inside its memory. That holds for every group
  // but the image's first and last, in every strip: at the left and right borders too, where a
  // piece may hold floats of the neighbouring row, zeroed once it has landed (zero_outside). The
  // other groups test each row: zeros above and below the image, and where a piece would reach
  // past the image's memory (its first and last row), step 10's float-by-float copies.
  __device__ __forceinline__ void issue(float* buf, const float* __restrict__ in, int64_t width, int64_t height,
                                        int lane, int warp) {
    constexpr int kLast = (kRows - 1) * kWarps;  // this warp's last row in a group
    const int64_t size = width * height;
    float* dst = buf + warp * kPitch + 4 * lane;
    if (y >= 0 && y + kLast < height &&
        (inside || (at >= 0 && at + kLast * width + 4 * kLanes * (kIters - 1) + 4 <= size))) {
#pragma unroll
      for (int k = 0; k < kRows; ++k)
#pragma unroll
        for (int m = 0; m < kIters; ++m)
          if (m == 0 || lane + kLanes * m < kPieces)
            ladder::cp_async_16(dst + k * kWarps * kPitch + 4 * kLanes * m, in + at + k * kWarps * width + 4 * kLanes * m);
    } else {
#pragma unroll
      for (int k = 0; k < kRows; ++k) {
        const bool row_inside = static_cast<uint64_t>(y + k * kWarps) < static_cast<uint64_t>(height);
#pragma unroll
        for (int m = 0; m < kIters; ++m) {
          if (m > 0 && lane + kLanes * m >= kPieces) continue;
          float* d = dst + k * kWarps * kPitch + 4 * kLanes * m;
          const int64_t e0 = at + k * kWarps * width + 4 * kLanes * m;
          if (!row_inside) {
            *reinterpret_cast<float4*>(d) = make_float4(0.f, 0.f, 0.f, 0.f);
          } else if (inside || (e0 >= 0 && e0 + 4 <= size)) {
            ladder::cp_async_16(d, in + e0);
          } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              if (masks & (1u << (4 * m + e))) ladder::cp_async_4(d + e, in + e0 + e);
              else d[e] = 0.f;
            }
          }
        }
      }
    }
    y += kGroupRows;
    at += kGroupRows * width;
  }

  // After the group in buf has landed (this thread's copies: cp.async.wait_group): zeros where this
  // lane's pieces reach past the left or right end of their row. Nothing to do in every strip but
  // the first and the last.
  __device__ __forceinline__ void zero_outside(float* buf, int lane, int warp) const {
    if (inside) return;
    float* dst = buf + warp * kPitch + 4 * lane;
#pragma unroll
    for (int m = 0; m < kIters; ++m) {
      const unsigned piece = (masks >> (4 * m)) & 0xFu;
      if (piece == 0xFu || (m > 0 && lane + kLanes * m >= kPieces)) continue;
#pragma unroll
      for (int k = 0; k < kRows; ++k)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          if (!(piece & (1u << e))) dst[k * kWarps * kPitch + 4 * kLanes * m + e] = 0.f;
    }
  }
};

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
// kWarps, .. in pairs; all rows of a warp share the offset s (a multiple of 8 rows apart), 0 .. 7:
// the filter compiled for s % 4, from float4 s / 4 of the staged row on.
template <int K, int kVec>
__device__ __forceinline__ void row_filter_group(const float* buf, int rows, float* dst, int s, int lane, int warp) {
  constexpr int kPitch = sector_pitch_of(K);
  for (int i = warp; i < rows; i += 2 * kWarps) {
    const int i1 = i + kWarps < rows ? i + kWarps : i;  // a lone last row is filtered twice, stored once
    const float* r0 = buf + i * kPitch + 4 * (s / 4);
    const float* r1 = buf + i1 * kPitch + 4 * (s / 4);
    float4 o0, o1;
    switch (s % 4) {
      case 0: row_filter_pair<K, 0>(r0, r1, lane, o0, o1); break;
      case 1: row_filter_pair<K, 1>(r0, r1, lane, o0, o1); break;
      case 2: row_filter_pair<K, 2>(r0, r1, lane, o0, o1); break;
      default: row_filter_pair<K, 3>(r0, r1, lane, o0, o1); break;
    }
    store_row_result<kVec>(dst + i * kTileW, o0, lane);
    if (i1 != i) store_row_result<kVec>(dst + i1 * kTileW, o1, lane);
  }
}

// The row pass of a group after the first: 32 rows, this warp's four at `rows`, rows + 8 pitch,
// .. (all at the offset kS), their results to `dst`, dst + 8 rows, .. The rows and the mid rows
// they go to are the same in every such group, so every shared-memory address is a base the block
// keeps and a constant offset; the offset S is switched on once per group.
// kRolled: the pairs in a loop (one copy of the filter) instead of unrolled (row_filter_next_group
// says when). kPitch: floats between staged rows (this step's sector_pitch_of, step 12's pitch_of).
template <int K, int kVec, int kS, int kPitch, bool kRolled = false>
__device__ __forceinline__ void row_filter_rows(const float* rows, float* dst, int lane) {
  constexpr int kRows = kGroupRows / kWarps;
  static_assert(kRows % 2 == 0, "rows are filtered in pairs");
#pragma unroll(kRolled ? 1 : kRows / 2)
  for (int k = 0; k < kRows; k += 2) {
    float4 o0, o1;
    row_filter_pair<K, kS>(rows + k * kWarps * kPitch, rows + (k + 1) * kWarps * kPitch, lane, o0, o1);
    store_row_result<kVec>(dst + k * kWarps * kTileW, o0, lane);
    store_row_result<kVec>(dst + (k + 1) * kWarps * kTileW, o1, lane);
  }
}
// Widths that are not a multiple of 4 (kVec = 1) start their rows at all four offsets in a float4
// (s % 4, set by warp % 4), so all four cases below run at once on an SM. With the pairs
// unrolled that was eight copies of the row filter, more code than the SM's instruction caches keep:
// at 8191^2, K = 31, Nsight Compute counted 2.33 no-instruction stalls per issued instruction
// (8192^2: 0.23). There the pair loop stays rolled, one copy of the filter per offset (0.20 stalls;
// 61% -> 68% of the floor, the same at K = 17). Widths a multiple of 4 run one case in every row
// (s % 4 the same; s / 4 may differ between warps) and keep the pairs unrolled.
// s: the rows' offset, 0 .. 7 (the filter for s % 4 from float4 s / 4 on; step 12 passes 0 .. 3).
template <int K, int kVec, int kPitch = pitch_of(K)>
__device__ __forceinline__ void row_filter_next_group(const float* buf, float* dst, int s, int lane, int warp) {
  const float* rows = buf + warp * kPitch + 4 * (s / 4);
  constexpr bool kRolled = kVec != 4;
  switch (s % 4) {
    case 0: row_filter_rows<K, kVec, 0, kPitch, kRolled>(rows, dst, lane); break;
    case 1: row_filter_rows<K, kVec, 1, kPitch, kRolled>(rows, dst, lane); break;
    case 2: row_filter_rows<K, kVec, 2, kPitch, kRolled>(rows, dst, lane); break;
    default: row_filter_rows<K, kVec, 3, kPitch, kRolled>(rows, dst, lane); break;
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

// Which of this lane's output columns exist (store_tile's `cols`): bit q for column col + 32 q on
// the 4-byte path, bit 0 for the float4 at col.
template <int kVec>
__device__ __forceinline__ unsigned output_columns(int64_t col, int64_t width) {
  unsigned cols = 0;
#pragma unroll
  for (int q = 0; q < (kVec == 4 ? 1 : 4); ++q)
    if (col + kLanes * q < width) cols |= 1u << q;
  return cols;
}

// One output row of a lane's 4 columns at `at` (out + y * width + x0 + l, or + 4 l for float4
// stores: step 08's store_columns layout), the columns in `cols` (bit q: column l + 32 q, or the
// float4), with the streaming hint (step 08).
template <int kVec>
__device__ __forceinline__ void store_row(float* __restrict__ at, const float4& v, unsigned cols) {
  if constexpr (kVec == 4) {
    if (cols & 1u) __stcs(reinterpret_cast<float4*>(at), v);
  } else {
    if (cols & 1u) __stcs(at, v.x);
    if (cols & 2u) __stcs(at + kLanes, v.y);
    if (cols & 4u) __stcs(at + 2 * kLanes, v.z);
    if (cols & 8u) __stcs(at + 3 * kLanes, v.w);
  }
}

// The kP output rows of a tile from `at` on, one pointer stepping by `width`; only the image's last
// tile checks rows (`rows` of them exist), only its last strip columns (every other strip passes
// cols = all, known at compile time).
template <int kVec>
__device__ __forceinline__ void store_tile(float* __restrict__ at, int64_t width, int64_t rows, unsigned cols,
                                           const float4 (&acc)[kP]) {
  if (rows >= kP) {
#pragma unroll
    for (int p = 0; p < kP; ++p, at += width) store_row<kVec>(at, acc[p], cols);
  } else {
#pragma unroll
    for (int p = 0; p < kP; ++p, at += width)
      if (p < rows) store_row<kVec>(at, acc[p], cols);
  }
}

// The column pass of one tile from the row results in `mid` (this lane's kP rows x 4 columns) and its
// stores; then `y` and `at` step to the next tile. all_columns: every strip but the image's last,
// whose columns are tested (cols, output_columns).
template <int K, int kVec>
__device__ __forceinline__ void column_pass_tile(const float* mid, int lane, int warp, bool all_columns, unsigned cols,
                                                 int64_t width, int64_t height, int64_t& y, float*& at) {
  float4 acc[kP];
  column_filter<K, kVec>(mid, warp * kP, lane, acc);
  if (all_columns) store_tile<kVec>(at, width, height - y, 0xFu, acc);
  else store_tile<kVec>(at, width, height - y, cols, acc);
  y += kTileH;
  at += kTileH * width;
}

// Step 10's strip_pipeline_pass with K a template parameter and the filters above; the taps come
// from __constant__ memory (load_taps), so shared memory holds only the mid rows and the stages.
// With K - 1 < 32, group 0 holds the K - 1 rows above the segment's first tile and every later
// group g completes tile g - 1: the mid rows are laid out the same for every tile (rows 0 .. K - 2
// the halo, K - 1 .. K + 30 the group just filtered), so the row and column passes and the move
// run at fixed shared-memory addresses, with two barriers per group (step 10: three).
template <int K, int kVec>
__global__ void __launch_bounds__(kWarps * kLanes, kMinBlocks)
compiled_taps_pass(const float* __restrict__ in, float* __restrict__ out, int64_t width, int64_t height,
                   int64_t seg_rows) {
  constexpr int kR = K / 2, kPitch = sector_pitch_of(K), kHalo = K - 1, kMidRows = kTileH + kHalo;
  static_assert(kHalo < kGroupRows, "group 0 is the halo above the first tile; each later group completes a tile");
  static_assert(kHalo <= kTileH, "the halo rows move to mid rows that neither they nor the row pass occupy");
  extern __shared__ float4 smem[];
  const int lane = threadIdx.x, warp = threadIdx.y;
  float* mid = reinterpret_cast<float*>(smem);  // row results: rows 0 .. K - 2 the halo of the next tile
  float* stage = mid + kMidRows * kTileW;       // kStages buffers of 32 staged input rows

  const int64_t x0 = int64_t(blockIdx.x) * kTileW;
  const int64_t ya = int64_t(blockIdx.y) * seg_rows, y_in = ya - kR;  // first output row, first input row
  const int64_t groups = 1 + ceil_div(std::min(seg_rows, height - ya), kTileH);  // the halo, then one per tile
  auto buffer = [&](int64_t g) { return stage + static_cast<int>(g % kStages) * kGroupRows * kPitch; };
  // Groups 1, 2, ..: this warp's rows start at offset s1 in their 32-byte sector (rows 32 apart).
  const int64_t y1 = y_in + kHalo + warp;
  const int s1 = sector_offset(in, y1, x0 - kR, width);
  NextGroups<K, kPitch> next(y1, x0 - kR - s1, width, lane);
  // Every thread commits one group per call, empty past the end, so the counts stay in step.
  auto issue = [&](int64_t g) {
    if (g == 0) stage_group<K>(buffer(0), in, y_in, kHalo, x0, width, height, lane, warp);
    else if (g < groups) next.issue(buffer(g), in, width, height, lane, warp);
    ladder::cp_async_commit();
  };
  // This thread's output columns (store_tile) and its first output row.
  const int64_t col = x0 + (kVec == 4 ? 4 * lane : lane);
  const unsigned cols = output_columns<kVec>(col, width);
  const bool all_columns = x0 + kTileW <= width;  // block-uniform: every strip but the last
  int64_t y = ya + warp * kP;
  float* at = out + y * width + col;

  for (int g = 0; g < kStages - 1; ++g) issue(g);
  for (int64_t g = 0; g < groups; ++g) {
    // Step 1: ask for group g + kStages - 1 (its buffer was last read before the previous
    // iteration's second barrier), then wait for group g.
    issue(g + kStages - 1);
    ladder::cp_async_wait<kStages - 1>();
    if (g > 0) next.zero_outside(buffer(g), lane, warp);
    __syncthreads();
    // Step 2: the row pass of group g: the halo rows into mid rows 0 .., a later group after them.
    if (g == 0) {
      const int s0 = sector_offset(in, y_in + warp, x0 - kR, width);
      row_filter_group<K, kVec>(buffer(0), kHalo, mid, s0, lane, warp);
      __syncthreads();
      continue;
    }
    // From the second tile on, first move the K - 1 rows this tile shares with the previous one
    // (mid rows 32 .. K + 30) to the top. Each warp moves the rows its row pass is about to
    // overwrite (its mid rows K - 1 + w + 8k that are 32 or more), so the barrier above, after
    // which no warp reads the mid rows, is the only one the move needs.
    float* rows = mid + (kHalo + warp) * kTileW;  // this warp's first mid row of the group
    if (g > 1) {
#pragma unroll
      for (int k = 0; k < kGroupRows / kWarps; ++k)
        if (warp + k * kWarps >= kTileH - kHalo) {
          const float4* from = reinterpret_cast<const float4*>(rows + k * kWarps * kTileW) + lane;
          reinterpret_cast<float4*>(rows + (k * kWarps - kTileH) * kTileW)[lane] = *from;
        }
      // Odd widths: a lane's row results are scattered over the float4s of other lanes
      // (store_row_result), so every lane of the warp must have moved its float4 first.
      if constexpr (kVec != 4) __syncwarp();
    }
    row_filter_next_group<K, kVec, kPitch>(buffer(g), rows, s1, lane, warp);
    __syncthreads();
    // Step 3: the column pass of tile g - 1 and its stores.
    column_pass_tile<K, kVec>(mid, lane, warp, all_columns, cols, width, height, y, at);
  }
}

template <int K, int kVec>
struct CompiledPass {
  static const void* kernel() { return reinterpret_cast<const void*>(compiled_taps_pass<K, kVec>); }
  static void launch(const Args& a) {
    const size_t bytes = sizeof(float) * (static_cast<size_t>(kTileH + K - 1) * kTileW +
                                          static_cast<size_t>(kStages) * kGroupRows * sector_pitch_of(K));
    const strip_pipeline::StripGrid grid =
        strip_pipeline::strip_grid(a, kernel(), kWarps * kLanes, bytes, kTileH, "the compiled-taps pass");
    compiled_taps_pass<K, kVec><<<dim3(grid.seg.strips, grid.seg.count), dim3(kLanes, kWarps), bytes, a.stream>>>(
        a.in, a.out, a.width, a.height, grid.seg.rows);
    CUDA_CHECK_LAUNCH();
    if (a.choice)
      *a.choice = "K = " + std::to_string(K) + " compiled in: taps as constant-bank operands; 128x32_p4, " +
                  grid.describe(kWarps, bytes);
  }
};

// Launches the kernel compiled for K = a.taps if there is one (a fold over the odd K from 3 to 31).
template <int kVec, int... Ks>
bool launch_compiled(const Args& a, std::integer_sequence<int, Ks...>) {
  return ((a.taps == 2 * Ks + kMinCompiledTaps ? (CompiledPass<2 * Ks + kMinCompiledTaps, kVec>::launch(a), true)
                                               : false) ||
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

// For a K without a kernel of its own: step 10's K-generic one, with its own tile rule; `which`
// names the K that have one (the record's choice says so).
void launch_generic(const Args& a, const char* which) {
  Args generic = a;
  generic.tile = "auto";
  strip_pipeline::launch(generic);
  if (a.choice)
    *a.choice = "K = " + std::to_string(a.taps) + " has no compiled kernel (" + std::string(which) +
                " do): step 10's K-generic kernel, " + *a.choice;
}

void launch(const Args& a) {
  if (!compiled(a.taps)) return launch_generic(a, "odd K 3 to 31");
  if (a.width % 4 == 0 && ladder::aligned16(a.out)) launch_compiled<4>(a, CompiledTaps{});
  else launch_compiled<1>(a, CompiledTaps{});
}

const Step kStep{"separable_conv/11_compiled_taps", launch,
                 "step 10's strip pass compiled for each odd K from 3 to 31: taps as constant-bank FMA operands, "
                 "row and column filters unrolled; other K: step 10's kernel",
                 load_taps, Transfers::none, "", /*intermediate=*/false};
LADDER_STEP(kStep);

}  // namespace separable_conv::compiled_taps
