// separable_conv step 09: one fused pass — the row results stay in shared memory for the column pass.
// Every two-pass step writes the intermediate image to DRAM and reads it back: 16 bytes per pixel,
// so even a perfect two-pass kernel pair reaches only 50% of the single-pass floor. Here one
// block computes a whole 128 x TH tile of the output:
//   1. it stages the input tile with both halos — TH + K' - 1 rows from y0 - R (a row per zero tap
//      too), columns x0 - R4 .. x0 + 127 + R — from global memory into shared memory (float4 loads
//      where the width allows);
//   2. each warp runs step 08's row filter over whole staged rows, 4 outputs per lane, and writes
//      the results back over the start of the same row (the warp owns the row; a __syncwarp()
//      separates its reads from its writes), so the row results need no second buffer;
//   3. the column filter of step 08 reads those row results and writes the output tile.
// DRAM sees each input pixel read once and each output pixel written once: 8 bytes per pixel.
// The price is redundancy inside the chip: the TH + K' - 1 staged rows are row-filtered for TH
// output rows (at K = 17: 1.6x the row-pass work with the default TH = 32, 1.3x with TH = 64), and
// the halo columns and rows are read again by the neighbouring tiles (from L2, not DRAM:
// lts__t_sector_hit_rate shows it). Step 10 removes both.
// Changes from step 08: one kernel instead of two; no intermediate image; the row pass filters
// the tile's halo rows too.
// Costs: (TH + K' - 1) x (128 + K') floats of shared memory per block: 30 KB at K = 17 with
// TH = 32 (49 KB with TH = 64), 163 KB at K = 127 (1 block per SM); registers about those of step
// 08's column pass (62-121 a thread against 63-102; ptxas 13.0, sm_90).
// --tile as step 08 (the same shapes and the same rule without it: the most resident warps per SM).
// Source: beyond the posts; the apron count (1.6x at K = 17): Victor Podlozhnyuk, "Image Convolution
// with CUDA" (NVIDIA, 2007). Run: build/bin/separable_conv_09_fused [--tile 128x32_p4]
#include "08_register_blocked.cu"  // tap layout, staging, the row and column filters

namespace separable_conv::fused {

using register_blocked::kLanes;
using register_blocked::kTileW;
using register_blocked::TapLayout;
using register_blocked::tap_layout;

// One block: kWarps warps compute a 128 x (kWarps * kP) tile of the output. kMinBlocks: resident
// blocks per SM asked of ptxas (a register cap; see step 08).
template <int kVec, int kWarps, int kP, int kMinBlocks>
__global__ void __launch_bounds__(kWarps * kLanes, kMinBlocks)
fused_pass_blocked(const float* __restrict__ in, float* __restrict__ out, const float* __restrict__ row_taps_in,
                   const float* __restrict__ col_taps_in, int64_t width, int64_t height, int k) {
  using namespace register_blocked;
  constexpr int kTileH = kWarps * kP;
  extern __shared__ float4 smem[];
  const TapLayout t = tap_layout(k);
  const int rows = kTileH + t.col_len - 1;  // the tile, its halo, the zero taps' rows
  const int pitch = kTileW + t.row_len;     // staged columns x0 - R4 ..; row results fill the first 128
  const int lane = threadIdx.x, warp = threadIdx.y;
  float* row_taps = reinterpret_cast<float*>(smem);
  float* col_taps = row_taps + t.row_len;
  float* tile = col_taps + t.col_len;       // rows x pitch floats
  stage_taps(row_taps, row_taps_in, k, t.shift, t.row_len);
  stage_taps(col_taps, col_taps_in, k, 0, t.col_len);
  __syncthreads();

  const int64_t x0 = int64_t(blockIdx.x) * kTileW, tiles_y = ceil_div(height, kTileH);
  for (int64_t ty = blockIdx.y; ty < tiles_y; ty += gridDim.y) {
    const int64_t y0 = ty * kTileH;
    // Step 1: input rows y0 - R .. y0 - R + rows - 1, columns x0 - R4 .., zeros outside the image.
    stage_rows<kVec, kStageBatch<kVec>>(tile, pitch, warp, kWarps, rows, in, y0 - t.r, height, x0 - t.r4, pitch, width, lane);
    __syncthreads();
    // Step 2: the row pass, in place: a warp filters whole rows, 4 outputs per lane.
    for (int i = warp; i < rows; i += kWarps) {
      float* staged = tile + i * pitch;
      const float4 v = row_filter4(staged + 4 * lane, reinterpret_cast<const float4*>(row_taps), t.row_len / 4);
      __syncwarp();  // every lane has read the row before any lane overwrites it
      reinterpret_cast<float4*>(staged)[lane] = v;
    }
    __syncthreads();
    // Step 3: the column pass over the row results, kP outputs down 4 columns per thread; Step 4: store.
    column_filter_store<kVec, kP>(tile, pitch, warp * kP, reinterpret_cast<const float4*>(col_taps), t.col_len / 4,
                                  out, x0, y0 + warp * kP, width, height, lane);
    __syncthreads();  // the next tile row restages the tile
  }
}

template <int kVec, int kWarps, int kP, int kMinBlocks>
struct FusedPass {
  static constexpr const char* kWhat = "the fused pass";
  static size_t bytes(int k) {
    const TapLayout t = tap_layout(k);
    return sizeof(float) * (t.row_len + t.col_len + (kWarps * kP + t.col_len - 1) * (kTileW + t.row_len));
  }
  static Candidate candidate(const Args& a, const char* name) {
    return {name, reinterpret_cast<const void*>(fused_pass_blocked<kVec, kWarps, kP, kMinBlocks>), kWarps * kLanes,
            bytes(a.taps)};
  }
  static void launch(const Args& a) {
    const size_t bytes = FusedPass::bytes(a.taps);
    ladder::require_shared_memory(reinterpret_cast<const void*>(fused_pass_blocked<kVec, kWarps, kP, kMinBlocks>), bytes,
                          *a.dev, kWhat);
    const dim3 grid = tile_grid(a.width, a.height, kTileW, kWarps * kP);
    fused_pass_blocked<kVec, kWarps, kP, kMinBlocks><<<grid, dim3(kLanes, kWarps), bytes, a.stream>>>(
        a.in, a.out, a.row_taps, a.col_taps, a.width, a.height, a.taps);
    CUDA_CHECK_LAUNCH();
  }
};

void launch(const Args& a) {
  // 16-byte accesses need every row to start 16-byte aligned: width a multiple of 4.
  if (a.width % 4 == 0 && ladder::aligned16(a.in) && ladder::aligned16(a.out))
    register_blocked::launch_tile<FusedPass, 4>(a);
  else
    register_blocked::launch_tile<FusedPass, 1>(a);
}

const Step kStep{"separable_conv/09_fused", launch,
                 "one pass: a 128 x TH output tile per block, input tile with halos in shared memory, "
                 "row results kept there for the column pass; step 08's filters",
                 nullptr, Transfers::none, register_blocked::kTiles, /*intermediate=*/false};
LADDER_STEP(kStep);

}  // namespace separable_conv::fused
