// separable_conv step 12: long filters (K = 63, 127) — when the roofline is the FMA floor, count
// the instructions that are not FMAs.
// From K = 63 on, a pixel needs more FMAs (2K: 126 at K = 63) than the H100 can feed it bytes for:
// the roofline is the FMA floor, not the bandwidth floor, and the time is decided by how many
// issue slots go to anything but the convolution's FMAs. Step 11 compiles its taps in only for
// K <= 31 and runs step 10's K-generic kernel above that. Nsight Compute at 8192 x 8192: at K = 63
// it issues 204 instructions per pixel for 128 FMAs (1.60 per FMA: the chunk loops, the window
// ring, the taps loaded from shared memory), at K = 127 386 for 258 (1.50). Here step 11's
// compiled filters run at K = 63 and 127: 150.8 and 299.8 instructions per pixel (1.17 and 1.14
// per FMA; Nsight Compute, H100, 2026-11-27). What kept them from those K was the layout, and K
// sets the resources:
//  * step 11 keeps exactly K - 1 halo rows and needs K - 1 < 32, so that every group of 32 input
//    rows after the first completes a tile. Here a tile's column pass reads the row results of the
//    last `slots` groups (ceil((K + 31) / 32): 3 at K = 63, 5 at 127), kept in shared memory as
//    slots of 32 rows: group g is row-filtered into the last slot and the column pass of tile
//    g - slots + 1 reads all of them at step 11's fixed addresses. Before the next group, each
//    thread moves its own rows and columns down one slot (the oldest group is no longer needed):
//    no barrier, one warp sync. Every group, the first too, is 32 rows from the first input row
//    the segment needs, so one staging path (step 11's NextGroups) copies them all;
//  * one cp.async stage instead of two: the next group is copied while the block runs the column
//    pass, half of the FMAs, long enough to hide the copy at these K. The stage saved is what lets
//    more blocks share an SM: at K = 63 74,240 bytes of shared memory a block, 3 blocks of 8 warps
//    per SM (two stages: 2 blocks); at K = 127 115,200 bytes, 2 blocks (two stages: 1). The extra
//    warps hide the shared-memory latency better: 65.8% and 65.4% of the FMA floor at K = 63 and
//    127, where two stages held 63.7% and 60.7%;
//  * odd widths (the 4-byte path): the rows of a group start at all four offsets S in their 16-byte
//    pieces, and step 11's row filter is compiled once for each S. At K = 127 the four copies are
//    8,128 FMA instructions, 130 KB of code for the FFMAs alone (about 143 KB with their loads, as
//    the float4 kernel compiles them; sm_90, CUDA 13.0) that the warps of an SM run side by side:
//    8191 x 8191 ran at 34% of the floor where 8192 x 8192 ran at 65%. Instruction fetch is the
//    likely cause (not profiled); the fix bears it out: here those groups are staged float by float
//    from column x0 - R (stage_by_floats), every row starts at S = 0, one copy of the filter serves
//    all: 56%.
// The taps (constant-bank operands; at K = 127 the uniform registers no longer hold them all, and
// 4,672 of the float4 kernel's 10,160 FFMAs take a tap that LDC.64 loaded into an ordinary register
// in every group), the row filter (4K FMAs per row and lane, one float4 load per 16 of them), the
// column filter (one float4 load per row for 4 outputs x 4 columns) and the stores are step 11's
// functions, compiled for the longer K.
// Changes from step 11: kernels for K = 63 and 127 with slots of row results, one stage and more
// blocks per SM; odd widths staged float by float. K <= 31 runs step 11's kernel, any other K
// step 10's (the record's `choice` says which).
// Costs: shared memory for up to 31 rows of row results more than K - 1 needs; the slot moves
// ((slots - 1) x 4 float4 per thread and group, under 1% of the FMAs); a register cap (80 at
// K = 63, 128 at K = 127); four more kernels of straight code (at K = 127: 10,160 FMA instructions
// on the float4 path, 4,064 on the 4-byte one) and a longer build; the float-by-float staging
// issues 7-9 copies per lane and row where the 16-byte one issues 2-3.
// Source: beyond the posts; the roofline model (Williams, Waterman, Patterson, "Roofline: an
// insightful visual performance model", CACM 2009).
// Run: build/bin/separable_conv_12_long_filters --taps 63
#include "11_compiled_taps.cu"  // the compiled filters, NextGroups, the stores; step 10's kernel

#include <string>
#include <utility>

namespace separable_conv::long_filters {

using compiled_taps::kP;
using compiled_taps::kTileH;
using compiled_taps::kWarps;
using compiled_taps::pitch_of;
using register_blocked::kLanes;
using register_blocked::kTileW;
using strip_pipeline::kGroupRows;

static_assert(kTileH == kGroupRows, "a group of input rows completes one tile");

// Groups of row results a tile's column pass reads: its 32 + K - 1 rows, in whole groups.
constexpr int slots_of(int k) { return (kTileH + k - 1 + kGroupRows - 1) / kGroupRows; }
// Shared memory per block: the slots and one stage of 32 input rows. On the H100 that is 74,240
// bytes at K = 63 (3 blocks per SM) and 115,200 at K = 127 (2 blocks per SM).
constexpr size_t shared_bytes_of(int k) {
  return sizeof(float) *
         (static_cast<size_t>(slots_of(k)) * kGroupRows * kTileW + static_cast<size_t>(kGroupRows) * pitch_of(k));
}
// The resident blocks per SM ptxas is asked for (a register cap: 80 and 128 registers a thread),
// those that shared_bytes_of fits on an H100.
constexpr int min_blocks_of(int k) { return k <= 63 ? 3 : 2; }

// Odd widths (the 4-byte path): the rows of a group start at all four offsets S in their 16-byte
// pieces, and step 11 compiles its row filter once for each S — four copies of 2,032 FMAs at
// K = 127, more code than the SM's instruction caches hold (the likely reason 8191 x 8191 ran at
// about half the speed of 8192 x 8192). Here those groups are copied float by float (4-byte
// cp.async) from column x0 - R, so every row starts at S = 0 and one copy of the filter serves them
// all. A lane issues kPitch / 32 copies per row where step 11 issued 2-3, a few per cent of the
// instructions at these K. Rows outside the image, and columns outside it in the first and last
// strip, are zeros.
template <int K>
__device__ __forceinline__ void stage_by_floats(float* buf, const float* __restrict__ in, int64_t y0, int64_t x0,
                                                int64_t width, int64_t height, int lane, int warp) {
  constexpr int kPitch = pitch_of(K), kIters = (kPitch + kLanes - 1) / kLanes;
  const int64_t xs = x0 - K / 2;                                // the staged rows' first column
  const bool columns_inside = xs >= 0 && xs + kPitch <= width;  // block-uniform: every strip but the first and last
#pragma unroll
  for (int k = 0; k < kGroupRows / kWarps; ++k) {
    const int i = warp + k * kWarps;
    const int64_t y = y0 + i, at = y * width + xs + lane;  // this lane's first float of row y
    const bool row_inside = y >= 0 && y < height;
    float* dst = buf + i * kPitch + lane;
    if (row_inside && columns_inside) {  // no tests per float
#pragma unroll
      for (int m = 0; m < kIters; ++m)
        if (m + 1 < kIters || lane + kLanes * m < kPitch) ladder::cp_async_4(dst + kLanes * m, in + at + kLanes * m);
      continue;
    }
#pragma unroll
    for (int m = 0; m < kIters; ++m) {
      if (lane + kLanes * m >= kPitch) continue;
      const int64_t x = xs + lane + kLanes * m;
      if (row_inside && x >= 0 && x < width) ladder::cp_async_4(dst + kLanes * m, in + at + kLanes * m);
      else dst[kLanes * m] = 0.f;
    }
  }
}

// Step 11's pass with the slot layout. Group g (input rows y_in + 32 g ..) is row-filtered into the
// last slot once the older slots have shifted down; from group slots - 1 on, the slots hold the row
// results tile g - slots + 1 needs, rows 0 .. K + 30 of them in order, so the column pass is step
// 11's, at the same fixed addresses.
template <int K, int kVec>
__global__ void __launch_bounds__(kWarps * kLanes, min_blocks_of(K))
long_filter_pass(const float* __restrict__ in, float* __restrict__ out, int64_t width, int64_t height,
                 int64_t seg_rows) {
  constexpr int kR = K / 2, kPitch = pitch_of(K), kSlots = slots_of(K);
  constexpr int kRowsPerWarp = kGroupRows / kWarps;  // rows w, w + 8, .. of every group
  extern __shared__ float4 smem[];
  const int lane = threadIdx.x, warp = threadIdx.y;
  float* mid = reinterpret_cast<float*>(smem);          // kSlots x 32 rows of row results
  float* stage = mid + kSlots * kGroupRows * kTileW;  // one stage: 32 staged input rows

  const int64_t x0 = int64_t(blockIdx.x) * kTileW;
  const int64_t ya = int64_t(blockIdx.y) * seg_rows, y_in = ya - kR;  // first output row, first input row
  const int64_t tiles = ceil_div(std::min(seg_rows, height - ya), kTileH);
  const int64_t groups = tiles + kSlots - 1;
  // The float4 path: every group's rows of this warp start at offset s in their 16-byte piece (rows
  // 32 apart), staged by step 11's NextGroups; the 4-byte path stages at offset 0.
  const int s = kVec == 4 ? strip_pipeline::row_offset(in, y_in + warp, x0 - kR, width) : 0;
  compiled_taps::NextGroups<K> next(y_in + warp, x0 - kR - s, width, lane);
  auto issue = [&](int64_t g) {
    if (g < groups) {
      if constexpr (kVec == 4) next.issue(stage, in, width, height, lane, warp);
      else stage_by_floats<K>(stage, in, y_in + g * kGroupRows, x0, width, height, lane, warp);
    }
    ladder::cp_async_commit();  // every thread commits one group per call, empty past the end
  };
  const int64_t col = x0 + (kVec == 4 ? 4 * lane : lane);
  const unsigned cols = compiled_taps::output_columns<kVec>(col, width);
  const bool all_columns = x0 + kTileW <= width;  // block-uniform: every strip but the last
  int64_t y = ya + warp * kP;
  float* at = out + y * width + col;
  float* last = mid + ((kSlots - 1) * kGroupRows + warp) * kTileW;  // this warp's first row in the last slot

  issue(0);
  for (int64_t g = 0; g < groups; ++g) {
    ladder::cp_async_wait<0>();
    if constexpr (kVec == 4) next.zero_outside(stage, lane, warp);
    __syncthreads();
    // The first groups fill the slots in order; after that each thread moves its rows and columns
    // one slot down (the oldest group is no longer needed) and the new group takes the last slot.
    float* rows = g < kSlots ? mid + (static_cast<int>(g) * kGroupRows + warp) * kTileW : last;
    if (g >= kSlots) {
#pragma unroll
      for (int k = 0; k < kRowsPerWarp; ++k)
#pragma unroll
        for (int slot = 0; slot + 1 < kSlots; ++slot) {
          float4* row = reinterpret_cast<float4*>(mid + (slot * kGroupRows + warp + k * kWarps) * kTileW) + lane;
          *row = row[kGroupRows * kTileW / 4];
        }
      __syncwarp();  // the odd-width row results are scattered across the lanes of a row
    }
    if constexpr (kVec == 4) compiled_taps::row_filter_next_group<K, kVec>(stage, rows, s, lane, warp);
    else compiled_taps::row_filter_rows<K, kVec, 0, kPitch>(stage + warp * kPitch, rows, lane);
    __syncthreads();
    issue(g + 1);  // the stage is free again: the copy of the next group overlaps the column pass
    if (g < kSlots - 1) continue;
    // The column pass of tile g - kSlots + 1 and its stores.
    compiled_taps::column_pass_tile<K, kVec>(mid, lane, warp, all_columns, cols, width, height, y, at);
  }
}

template <int K, int kVec>
struct LongPass {
  static const void* kernel() { return reinterpret_cast<const void*>(long_filter_pass<K, kVec>); }
  static void launch(const Args& a) {
    constexpr size_t bytes = shared_bytes_of(K);
    const strip_pipeline::StripGrid grid =
        strip_pipeline::strip_grid(a, kernel(), kWarps * kLanes, bytes, kTileH, "the long-filter pass");
    long_filter_pass<K, kVec><<<dim3(grid.seg.strips, grid.seg.count), dim3(kLanes, kWarps), bytes, a.stream>>>(
        a.in, a.out, a.width, a.height, grid.seg.rows);
    CUDA_CHECK_LAUNCH();
    if (a.choice)
      *a.choice = "K = " + std::to_string(K) + " compiled in, " + std::to_string(slots_of(K)) +
                  " slots of row results, 1 stage: 128x32_p4, " + grid.describe(kWarps, bytes);
  }
};

// The long K with a kernel of their own.
template <int kVec>
bool launch_long(const Args& a) {
  switch (a.taps) {
    case 63: LongPass<63, kVec>::launch(a); return true;
    case 127: LongPass<127, kVec>::launch(a); return true;
    default: return false;
  }
}
bool compiled(int k) { return k == 63 || k == 127; }

void load_taps(const Args& a) {
  if (!compiled(a.taps)) return compiled_taps::load_taps(a);  // step 11's kernels (step 10's reads a.row_taps)
  const size_t bytes = sizeof(float) * a.taps;
  CUDA_CHECK(cudaMemcpyToSymbolAsync(compiled_taps::c_row_taps, a.row_taps, bytes, 0, cudaMemcpyDeviceToDevice,
                                     a.stream));
  CUDA_CHECK(cudaMemcpyToSymbolAsync(compiled_taps::c_col_taps, a.col_taps, bytes, 0, cudaMemcpyDeviceToDevice,
                                     a.stream));
}

void launch(const Args& a) {
  if (compiled_taps::compiled(a.taps)) return compiled_taps::launch(a);  // K = 3 ... 31: step 11's kernels
  if (!compiled(a.taps)) return compiled_taps::launch_generic(a, "odd K 3 to 31, 63 and 127");
  if (a.width % 4 == 0 && ladder::aligned16(a.out)) launch_long<4>(a);
  else launch_long<1>(a);
}

const Step kStep{"separable_conv/12_long_filters", launch,
                 "step 11's compiled filters for K = 63 and 127: the row results of a tile kept as slots of 32 rows; "
                 "K = 3 ... 31: step 11's kernels; other K: step 10's",
                 load_taps, Transfers::none, "", /*intermediate=*/false};
LADDER_STEP(kStep);

}  // namespace separable_conv::long_filters
