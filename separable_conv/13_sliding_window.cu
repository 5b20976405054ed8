// separable_conv step 13: sliding windows — a thread filters 16 outputs in a row along the filter's
// direction, so each value it loads from shared memory feeds up to 16 FMAs instead of 4.
// Step 11 at K = 31 (8192 x 8192) issues an instruction in 72.4% of its SMs' cycles, and what its
// warps most often wait for is a shared-memory load: 3.00 short-scoreboard stalls per issued
// instruction, the shared-memory pipe busy 72% of the time (Nsight Compute: 0.69 wavefronts per
// pixel; a wavefront is one pass of the pipe, up to 128 bytes). Most of them are its two filters'
// loads: its row pass gives a row to a warp and 4 outputs to a lane, each lane loading its own
// window of K + 3 floats (36-40 bytes per output); its column pass gives 4 rows x 4 columns to a
// thread, which loads K + 3 rows of a float4 (34 bytes per output). Here each thread slides its
// filter along a run of 16 outputs, the window in registers:
//  * the row pass gives a row to each lane: lane i filters row i of a group of 32, warp w its
//    columns 16 w .. 16 w + 15, loading (K + 18) / 4 float4s for 16 outputs (12 bytes per output
//    at K = 31). The 8 lanes of a quarter-warp now load the same column of 8 consecutive rows, which
//    share banks unless the rows are padded: staged rows and row results are 4 x an odd number of
//    floats apart, so those 8 loads of 16 bytes cover all 32 banks;
//  * the column pass gives 16 rows of one column to a thread: lane l of warp w computes column
//    32 (w % 4) + l, rows 16 (w / 4) .. + 15, loading K + 15 floats (11.5 bytes per output at
//    K = 31); a warp's loads and stores are 32 consecutive floats;
//  * the row results of a tile live in step 12's slots of 32 rows (two up to K = 33, three at
//    K = 63): each group is filtered into the last after each lane moved its own part of the others
//    (its row, its 16 columns) down one slot, which needs no barrier and no warp sync. K = 63 also
//    keeps step 12's one cp.async stage, so that three blocks share an SM.
// Nsight Compute (the chapter): at K = 31 0.31 wavefronts per pixel instead of 0.69, an eighth of the
// short-scoreboard stalls; at K = 63, where the roofline is the FMA floor, 0.50 instead of 1.27
// against step 12, and the SMs issue in 83% of their cycles instead of 79%.
// Odd K from 3 to 31 and K = 63, on widths that are a multiple of 4: there every staged row starts
// at the same offset S in its 16-byte piece (one of the four compiled windows runs). At other widths
// neighbouring rows start at different S, and with a lane per row the four windows would diverge
// within a warp; the ways tried around that (the appendix) did not beat step 11's kernel, and those
// widths run as in step 12.
// The taps stay constant-bank operands and every output sums its taps in step 11's order, so the
// images are step 11's, bit for bit.
// Changes from step 11: 16 outputs per thread along the filter's direction in both passes; a lane
// per row in the row pass; padded rows in shared memory; 4-byte stores; step 12's slots.
// Costs: 16 global stores per 16 outputs where step 11 issued 4 of a float4, each with a 64-bit
// address step; 16 accumulators a thread in each pass (72 registers, 80 at K = 63); shared memory
// for the padding and step 12's slots (75,776 bytes a block at K = 31 and at K = 63: 3 blocks
// per SM). Other widths run as in step 12 (step 11's kernel up to K = 31, step 12's at K = 63);
// K = 127 runs step 12's kernel (five padded slots would leave room for one block per SM), any other
// K step 10's.
// Source: beyond the posts; register blocking along the filter's direction is step 10's sliding
// window carried to both passes; shared-memory banks and wavefronts: CUDA C++ Best Practices Guide
// (shared memory) and Nsight Compute's memory tables.
// Run: build/bin/separable_conv_13_sliding_window --taps 31 (or --taps 63)
#include "12_long_filters.cu"  // step 11's taps, staging and kernels; step 12's long K

#include <string>
#include <utility>

namespace separable_conv::sliding_window {

using compiled_taps::c_col_taps;
using compiled_taps::c_row_taps;
using register_blocked::kLanes;
using register_blocked::kTileW;
using strip_pipeline::kGroupRows;

constexpr int kMinTaps = 3, kMaxTaps = 31;  // odd K in between have a kernel here
constexpr int kLongTaps = 63;                // and this one, with three slots and one stage
constexpr int kWarps = 8, kMinBlocks = 3;
constexpr int kRun = 16;            // outputs per thread and pass, along the filter's direction
constexpr int kTileH = kGroupRows;  // one group of input rows completes one tile
// The row pass: lane i takes row i of a group, warp w columns 16 w .. 16 w + 15.
static_assert(kLanes == kGroupRows && kWarps * kRun == kTileW, "the row pass covers a group");
// The column pass: lane l of warp w takes column 32 (w % 4) + l, rows 16 (w / 4) .. + 15.
constexpr int kColumnWarps = kTileW / kLanes;
static_assert(kWarps / kColumnWarps * kRun == kTileH, "the column pass covers a tile");
// Floats between rows in shared memory: 4 x an odd number, so that the 16-byte loads or stores of
// 8 consecutive rows at one column (a quarter-warp's) hit 8 different groups of 4 banks.
constexpr int padded_pitch(int floats) { return 4 * ((floats + 3) / 4 + ((floats + 3) / 4 + 1) % 2); }
constexpr int kMidPitch = padded_pitch(kTileW);                             // row results: 132
constexpr int staged_pitch(int k) { return padded_pitch(k + kTileW + 2); }  // S + 128 + K - 1, S <= 3
// Step 12's slots of row results (2 up to K = 33, 3 at K = 63) and cp.async stages (one at K = 63,
// so that three blocks still share an SM).
constexpr int stages_of(int k) { return k <= kMaxTaps ? 2 : 1; }
constexpr size_t shared_bytes_of(int k) {
  return sizeof(float) * (static_cast<size_t>(long_filters::slots_of(k)) * kGroupRows * kMidPitch +
                          static_cast<size_t>(stages_of(k)) * kGroupRows * staged_pitch(k));
}

// A lane's 16 row results: out[q] = sum_{j<K} c_row_taps[j] * row[kS + q + j], from the float4s of
// its window, loaded in order; each element feeds the outputs whose taps reach it, taps ascending
// per output (step 11's order).
template <int K, int kS>
__device__ __forceinline__ void row_filter_run(const float* row, float (&acc)[kRun]) {
  constexpr int kWindow = (kS + kRun + K - 2) / 4 + 1;  // float4s holding elements kS .. kS + kRun + K - 2
  const float4* window = reinterpret_cast<const float4*>(row);
#pragma unroll
  for (int q = 0; q < kRun; ++q) acc[q] = 0.f;
#pragma unroll
  for (int p = 0; p < kWindow; ++p) {
    const float4 u = window[p];
    const float e[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int m = 0; m < 4; ++m)
#pragma unroll
      for (int q = 0; q < kRun; ++q) {
        const int j = 4 * p + m - kS - q;  // the tap that meets element 4p + m for output q
        if (j >= 0 && j < K) acc[q] = fmaf(c_row_taps[j], e[m], acc[q]);
      }
  }
}

// This lane's 16 row results of a group into its row of the row results: the window starts at
// element s of the staged row, compiled for each s and switched on once per group.
template <int K>
__device__ __forceinline__ void row_pass(const float* staged, float* results, int s) {
  float acc[kRun];
  switch (s) {
    case 0: row_filter_run<K, 0>(staged, acc); break;
    case 1: row_filter_run<K, 1>(staged, acc); break;
    case 2: row_filter_run<K, 2>(staged, acc); break;
    default: row_filter_run<K, 3>(staged, acc); break;
  }
#pragma unroll
  for (int j = 0; j < kRun / 4; ++j)
    reinterpret_cast<float4*>(results)[j] = make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]);
}

// 16 outputs down one column of the row results (rows kMidPitch floats apart from `top`): acc[p] =
// sum_{j<K} c_col_taps[j] * top[(p + j) x kMidPitch]; rows 0 .. kRun + K - 2 loaded once each, in
// order, row i feeding output p with tap i - p.
template <int K>
__device__ __forceinline__ void column_filter_run(const float* top, float (&acc)[kRun]) {
#pragma unroll
  for (int p = 0; p < kRun; ++p) acc[p] = 0.f;
#pragma unroll
  for (int i = 0; i < kRun + K - 1; ++i) {
    const float v = top[i * kMidPitch];
#pragma unroll
    for (int p = 0; p < kRun; ++p)
      if (i - p >= 0 && i - p < K) acc[p] = fmaf(c_col_taps[i - p], v, acc[p]);
  }
}

// The strip pass with both filters sliding along runs of 16, for widths that are a multiple of 4
// (every staged row starts at the same offset S; launch() sends the others elsewhere). Group g
// (input rows y_in + 32 g ..) is row-filtered into slot min(g, kSlots - 1); from group kSlots - 1 on,
// the slots hold the row results tile g - kSlots + 1 needs (rows 0 .. K + 30 of them), and its
// column pass follows (step 12's slots).
template <int K>
__global__ void __launch_bounds__(kWarps * kLanes, kMinBlocks)
sliding_window_pass(const float* __restrict__ in, float* __restrict__ out, int64_t width, int64_t height,
                    int64_t seg_rows) {
  constexpr int kR = K / 2, kPitch = staged_pitch(K), kSlots = long_filters::slots_of(K), kStages = stages_of(K);
  extern __shared__ float4 smem[];
  const int lane = threadIdx.x, warp = threadIdx.y;
  float* mid = reinterpret_cast<float*>(smem);            // kSlots x 32 rows of row results
  float* stage = mid + kSlots * kGroupRows * kMidPitch;  // kStages buffers of 32 staged input rows

  const int64_t x0 = int64_t(blockIdx.x) * kTileW;
  const int64_t ya = int64_t(blockIdx.y) * seg_rows, y_in = ya - kR;  // first output row, first input row
  const int64_t groups = ceil_div(std::min(seg_rows, height - ya), kTileH) + kSlots - 1;
  auto buffer = [&](int64_t g) { return stage + static_cast<int>(g % kStages) * kGroupRows * kPitch; };
  // Staged as in step 11 (warp w copies rows w + 8 k, from the 16-byte piece that holds column
  // x0 - R); every row starts at the same offset s in its piece.
  const int s = strip_pipeline::row_offset(in, y_in + warp, x0 - kR, width);
  compiled_taps::NextGroups<K, kPitch> next(y_in + warp, x0 - kR - s, width, lane);
  auto issue = [&](int64_t g) {  // every thread commits one group per call, empty past the end
    if (g < groups) next.issue(buffer(g), in, width, height, lane, warp);
    ladder::cp_async_commit();
  };
  // The row pass: this lane's staged row and row of results, at this warp's 16 columns.
  const int staged_at = lane * kPitch + kRun * warp;
  float* const first_slot = mid + lane * kMidPitch + kRun * warp;
  float* const last_slot = first_slot + (kSlots - 1) * kGroupRows * kMidPitch;
  // The column pass: this thread's column and first row in the tile, its first output.
  const int tile_col = kLanes * (warp % kColumnWarps) + lane, tile_row = kRun * (warp / kColumnWarps);
  const float* const column_top = mid + tile_row * kMidPitch + tile_col;
  const bool col_inside = x0 + tile_col < width;
  int64_t y = ya + tile_row;
  float* at = out + y * width + x0 + tile_col;

  issue(0);  // one or two stages: group 0 is the only one in flight before the loop
  for (int64_t g = 0; g < groups; ++g) {
    // Two stages: group g + 1 into the buffer the row pass of g - 1 read before the last barrier.
    // Then wait for group g.
    if constexpr (kStages > 1) issue(g + kStages - 1);
    ladder::cp_async_wait<kStages - 1>();
    next.zero_outside(buffer(g), lane, warp);
    __syncthreads();
    // The row pass of group g. From group kSlots on each lane first moves its own row results (its
    // row, its 16 columns) down one slot: the only thread that overwrites them next is itself, and
    // the barrier above ended the column pass that read them.
    float* results = g >= kSlots - 1 ? last_slot : first_slot + static_cast<int>(g) * kGroupRows * kMidPitch;
    if (g >= kSlots) {
#pragma unroll
      for (int slot = 0; slot + 1 < kSlots; ++slot)
#pragma unroll
        for (int j = 0; j < kRun / 4; ++j) {
          float4* row = reinterpret_cast<float4*>(first_slot + slot * kGroupRows * kMidPitch) + j;
          *row = row[kGroupRows * kMidPitch / 4];
        }
    }
    row_pass<K>(buffer(g) + staged_at, results, s);
    __syncthreads();
    if constexpr (kStages == 1) issue(g + 1);  // the stage is free: the copy overlaps the column pass
    if (g < kSlots - 1) continue;
    // The column pass of tile g - kSlots + 1 and its stores (4-byte, a warp's 32 consecutive columns),
    // with the streaming hint (step 08); only the image's last tile tests rows, its last strip columns.
    float acc[kRun];
    column_filter_run<K>(column_top, acc);
    if (col_inside) {
      const int64_t rows = height - y;
      float* out_row = at;
      if (rows >= kRun) {
#pragma unroll
        for (int p = 0; p < kRun; ++p, out_row += width) __stcs(out_row, acc[p]);
      } else {
#pragma unroll
        for (int p = 0; p < kRun; ++p, out_row += width)
          if (p < rows) __stcs(out_row, acc[p]);
      }
    }
    y += kTileH;
    at += kTileH * width;
  }
}

template <int K>
struct SlidingPass {
  static const void* kernel() { return reinterpret_cast<const void*>(sliding_window_pass<K>); }
  static void launch(const Args& a) {
    constexpr size_t bytes = shared_bytes_of(K);
    const strip_pipeline::StripGrid grid =
        strip_pipeline::strip_grid(a, kernel(), kWarps * kLanes, bytes, kTileH, "the sliding-window pass");
    sliding_window_pass<K><<<dim3(grid.seg.strips, grid.seg.count), dim3(kLanes, kWarps), bytes, a.stream>>>(
        a.in, a.out, a.width, a.height, grid.seg.rows);
    CUDA_CHECK_LAUNCH();
    if (a.choice)
      *a.choice = "K = " + std::to_string(K) + " compiled in, runs of 16 in both passes: 128x32, " +
                  grid.describe(kWarps, bytes);
  }
};

// Launches the kernel compiled for K = a.taps (a fold over the odd K from 3 to 31; K = 63 apart).
template <int... Ks>
void launch_compiled(const Args& a, std::integer_sequence<int, Ks...>) {
  (void)((a.taps == 2 * Ks + kMinTaps ? (SlidingPass<2 * Ks + kMinTaps>::launch(a), true) : false) || ...);
}
using CompiledTaps = std::make_integer_sequence<int, (kMaxTaps - kMinTaps) / 2 + 1>;

bool compiled(int k) { return (k >= kMinTaps && k <= kMaxTaps && k % 2 == 1) || k == kLongTaps; }

void load_taps(const Args& a) { long_filters::load_taps(a); }  // the same K, the same __constant__ taps

// Widths that are not a multiple of 4 start neighbouring rows at different offsets S, and a warp's
// lanes here are different rows: none of the ways tried to run them here beat step 11's kernel
// (the chapter's appendix), so they run as in step 12 (step 11's kernel up to K = 31, step 12's at
// 63 and 127), and the record's choice says so.
void launch(const Args& a) {
  if (!compiled(a.taps)) return long_filters::launch(a);  // K = 127: step 12's kernel; other K step 10's
  if (a.width % 4 == 0) {
    if (a.taps == kLongTaps) return SlidingPass<kLongTaps>::launch(a);
    return launch_compiled(a, CompiledTaps{});
  }
  long_filters::launch(a);
  if (a.choice) *a.choice = "a width that is not a multiple of 4, as step 12: " + *a.choice;
}

const Step kStep{"separable_conv/13_sliding_window", launch,
                 "each thread filters 16 outputs along the filter's direction in both passes (a lane a row in "
                 "the row pass) for each odd K from 3 to 31 and K = 63; K = 127: step 12's kernel; "
                 "other K: step 10's",
                 load_taps, Transfers::none, "", /*intermediate=*/false};
LADDER_STEP(kStep);

}  // namespace separable_conv::sliding_window
