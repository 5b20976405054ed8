// separable_conv step 08: several outputs per thread from a sliding register window, float4 loads
// and stores, taps applied four at a time.
// Steps 04-07 give each thread one output and one shared (or cached) load per tap: at K = 17 a
// pixel costs 17 loads and 17 FMAs per pass, and the load pipe, not DRAM, can set the pace. Here:
//  * Row pass: a warp stages 128 + K' pixels of a row in shared memory (float4 loads), and each lane
//    computes 4 adjacent outputs. Taps go in chunks of 4: per chunk a lane loads ONE new float4 of
//    its window (the previous one is kept in registers) and does 16 FMAs — 4 outputs x 4 taps.
//    To make every window start on a float4, the row is staged from x0 - R4 (R rounded up to 4)
//    and the taps are shifted by R4 - R (zeros in front); taps are padded with zeros to whole
//    chunks (K' = K + shift, rounded up to 4). Zero taps add exact zeros: results are unchanged.
//  * Column pass: a block stages a 128-column tile of the intermediate, TH + K' - 1 rows tall with
//    its halo and a row per zero tap (TH = warps x P rows; K' here is K rounded up to a multiple
//    of 4, the column taps padded to whole chunks), and each thread computes a P x 4 patch: P
//    outputs down 4 columns. Per chunk of 4 taps it loads 4 new rows of its window (P - 1 stay in
//    registers) and does 16 P FMAs.
//  * Global memory: 16-byte loads and stores when the width is a multiple of 4 (every row then
//    starts 16-byte aligned); otherwise the same kernels with scalar loads and stores, each lane
//    taking columns lane, lane + 32, lane + 64, lane + 96, so a warp still touches 128 consecutive
//    bytes per access (row-pass results go back through the staged row to be stored that way).
//    Staging issues several rows' loads before any store (8 float4 loads in flight per lane);
//    results are stored evict-first (__stcs), so L2 keeps the rows neighbouring tiles read as halo.
// The taps stay K-generic: the chunk loop runs K'/4 times for any K, no per-K instantiation.
// Changes from step 07: new kernels; taps copied per block from global into shared memory.
// Costs: 2-3x the registers of step 07 (63-102 a thread against its 32; ptxas 13.0 -v, sm_90),
// 4-byte shared reads become 16-byte ones, up to 3 zero taps per pass (K = 17: 20 FMAs per output
// and pass instead of 17).
// --tile picks the column pass's shape (kTiles below); without it the step picks the shape with the
// most resident warps per SM on this GPU (records it as `choice`).
// Still two passes: 16 B per pixel through DRAM, at best 50% of the single-pass floor.
// Source: beyond the posts; the apron count that chooses the tile: Victor Podlozhnyuk, "Image
// Convolution with CUDA" (NVIDIA, 2007). Run: build/bin/separable_conv_08_register_blocked [--tile 128x32_p4]
#include "common/buffers.h"
#include "separable_conv/separable_conv.cuh"

#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace separable_conv::register_blocked {

constexpr int kLanes = 32;
constexpr int kTileW = 4 * kLanes;   // 128 columns per tile: each lane owns 4 of them
constexpr int kRowWarps = 8;         // row pass: 8 warps per block ...
constexpr int kRowsPerWarp = 4;      // ... each staging and filtering 4 rows per tile row
static_assert(kTileW == 128, "a warp's row of a tile is 512 contiguous bytes: 4 full 128-byte lines");
// Resident blocks per SM asked of ptxas (__launch_bounds__' second argument): it caps the
// registers at 65536 / (blocks x threads). Without one, ptxas 13.0 capped the 16-warp kernels at
// 40 registers and spilled, and let the 8-warp ones take up to 114.
constexpr int kRowMinBlocks = 3;     // row pass: 8 warps, <= 80 registers, 3+ blocks per SM

// How the taps are laid out in shared memory: padded to whole chunks of 4 (one float4 = four
// FMAs per output), the row taps shifted so that every lane's window starts on a float4.
struct TapLayout {
  int r;        // radius (K - 1) / 2
  int r4;       // R rounded up to a multiple of 4: a row is staged from x0 - r4, 16-byte aligned
  int shift;    // r4 - r: row tap i sits at padded index i + shift
  int row_len;  // padded row taps: K + shift rounded up to a multiple of 4
  int col_len;  // padded column taps: K rounded up to a multiple of 4
};
__host__ __device__ inline TapLayout tap_layout(int k) {
  const int r = k / 2, r4 = (r + 3) / 4 * 4, shift = r4 - r;
  return {r, r4, shift, (k + shift + 3) / 4 * 4, (k + 3) / 4 * 4};
}

// dst[j] = taps[j - shift] for shift <= j < shift + k, 0 elsewhere, j < len (every thread helps).
__device__ __forceinline__ void stage_taps(float* dst, const float* taps, int k, int shift, int len) {
  for (int j = threadIdx.y * blockDim.x + threadIdx.x; j < len; j += blockDim.x * blockDim.y)
    dst[j] = (j >= shift && j < shift + k) ? taps[j - shift] : 0.f;
}

// Stages tile rows first, first + step, ... (below count): tile row i, at dst + i * pitch, gets
// image row y0 + i at columns x0 .. x0 + len - 1 (len <= 256), zeros outside the image. A warp
// loads kBatch rows before storing any, so each lane has up to 2 kBatch float4 loads (kVec = 4:
// x0 and width multiples of 4, so a group is all inside or all outside) or 8 kBatch float loads
// (kVec = 1, one float per lane and access) in flight: enough bytes in flight per SM to cover DRAM
// latency. Where count is a compile-time 4 (the row pass), nvcc unrolls the batch loop too: with
// kVec = 1 the row pass issues all 32 float loads, 128 bytes, before its first store
// (cuobjdump -sass build/bin/separable_conv_08_register_blocked).
template <int kVec, int kBatch>
__device__ __forceinline__ void stage_rows(float* dst, int pitch, int first, int step, int count,
                                           const float* __restrict__ img, int64_t y0, int64_t height,
                                           int64_t x0, int len, int64_t width, int lane) {
  constexpr int kPer = 256 / (kVec * kLanes);  // accesses per lane and row
  using V = std::conditional_t<kVec == 4, float4, float>;
  for (int i0 = first; i0 < count; i0 += kBatch * step) {
    V v[kBatch][kPer];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int64_t y = y0 + i0 + b * step;
      const bool row_inside = i0 + b * step < count && y >= 0 && y < height;
#pragma unroll
      for (int m = 0; m < kPer; ++m) {
        const int e = kVec * (lane + kLanes * m);  // the first of this access's kVec columns
        const int64_t x = x0 + e;
        if constexpr (kVec == 4)
          v[b][m] = (row_inside && e < len && x >= 0 && x < width)
                        ? __ldg(reinterpret_cast<const float4*>(img + y * width + x))
                        : make_float4(0.f, 0.f, 0.f, 0.f);
        else
          v[b][m] = (row_inside && e < len && x >= 0 && x < width) ? __ldg(img + y * width + x) : 0.f;
      }
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
#pragma unroll
      for (int m = 0; m < kPer; ++m) {
        const int i = i0 + b * step, e = kVec * (lane + kLanes * m);
        if (i < count && e < len) *reinterpret_cast<V*>(dst + i * pitch + e) = v[b][m];
      }
  }
}
// Rows per batch while staging: 8 float4 or 16 float loads per lane (the row pass's kVec = 1
// kernel issues both of its batches, 32 float loads, before storing: see stage_rows).
template <int kVec>
constexpr int kStageBatch = kVec == 4 ? 4 : 2;

// The 4 columns a lane owns in a 128-column tile: 4 adjacent ones (kVec = 4, one float4) or
// lane + 32 q (kVec = 1: each of the 4 accesses of a warp is 32 consecutive floats).
template <int kVec>
__device__ __forceinline__ int tile_column(int lane, int q) {
  return kVec == 4 ? 4 * lane + q : lane + kLanes * q;
}
template <int kVec>
__device__ __forceinline__ float4 load_columns(const float* tile_row, int lane) {
  if constexpr (kVec == 4) return reinterpret_cast<const float4*>(tile_row)[lane];
  else return make_float4(tile_row[lane], tile_row[lane + 32], tile_row[lane + 64], tile_row[lane + 96]);
}
// Stores a lane's 4 columns of one output row (columns x0 + tile_column(lane, q)) that exist,
// with the streaming hint (st.global.cs, evict-first): results are written once and not read
// again by this kernel, so they should not push the inputs' halo rows out of L2. The intrinsic
// also keeps a float4 store whole (written as *reinterpret_cast<float4*>(p) = v, nvcc 13.0 split
// it into four 4-byte stores here).
template <int kVec>
__device__ __forceinline__ void store_columns(float* row, int64_t x0, int64_t width, float4 v, int lane) {
  if constexpr (kVec == 4) {
    const int64_t x = x0 + 4 * lane;
    if (x < width) __stcs(reinterpret_cast<float4*>(row + x), v);
  } else {
    const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int q = 0; q < 4; ++q)
      if (x0 + lane + kLanes * q < width) __stcs(row + x0 + lane + kLanes * q, e[q]);
  }
}

__device__ __forceinline__ void fma4(float4& acc, float t, const float4& v) {
  acc.x = fmaf(t, v.x, acc.x);
  acc.y = fmaf(t, v.y, acc.y);
  acc.z = fmaf(t, v.z, acc.z);
  acc.w = fmaf(t, v.w, acc.w);
}

// Four adjacent outputs of a row: out[q] = sum_j taps[j] * w[q + j], j ascending, for a window w
// (16-byte aligned) of 4 * chunks + 4 floats. The window slides one float4 per chunk: `a` is the
// float4 the chunk starts in, `b` the next one, loaded fresh; `a` is not reloaded.
__device__ __forceinline__ float4 row_filter4(const float* w, const float4* taps, int chunks) {
  const float4* w4 = reinterpret_cast<const float4*>(w);
  float4 a = w4[0];
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int c = 0; c < chunks; ++c) {
    const float4 b = w4[c + 1], t = taps[c];
    acc.x = fmaf(t.x, a.x, acc.x); acc.x = fmaf(t.y, a.y, acc.x); acc.x = fmaf(t.z, a.z, acc.x); acc.x = fmaf(t.w, a.w, acc.x);
    acc.y = fmaf(t.x, a.y, acc.y); acc.y = fmaf(t.y, a.z, acc.y); acc.y = fmaf(t.z, a.w, acc.y); acc.y = fmaf(t.w, b.x, acc.y);
    acc.z = fmaf(t.x, a.z, acc.z); acc.z = fmaf(t.y, a.w, acc.z); acc.z = fmaf(t.z, b.x, acc.z); acc.z = fmaf(t.w, b.y, acc.z);
    acc.w = fmaf(t.x, a.w, acc.w); acc.w = fmaf(t.y, b.x, acc.w); acc.w = fmaf(t.z, b.y, acc.w); acc.w = fmaf(t.w, b.z, acc.w);
    a = b;
  }
  return acc;
}

// kP outputs down a lane's 4 columns of a tile (rows `pitch` floats apart): acc[p] = sum_j taps[j]
// * tile[row0 + p + j], j ascending. Reads rows row0 .. row0 + 4 * chunks + kP - 2. Per chunk, 4
// new rows enter the window w and kP - 1 are kept in registers; after the last chunk, w[0 ..
// kP - 2] hold rows row0 + 4 * chunks .. (for a caller that goes on with more taps: step 10).
template <int kVec, int kP>
__device__ __forceinline__ void column_filter(const float* tile, int pitch, int row0, const float4* taps,
                                              int chunks, int lane, float4 (&acc)[kP], float4 (&w)[kP + 3]) {
#pragma unroll
  for (int i = 0; i < kP - 1; ++i) w[i] = load_columns<kVec>(tile + (row0 + i) * pitch, lane);
#pragma unroll
  for (int p = 0; p < kP; ++p) acc[p] = make_float4(0.f, 0.f, 0.f, 0.f);
  const float* next = tile + (row0 + kP - 1) * pitch;  // the first of the 4 rows chunk c brings in
  for (int c = 0; c < chunks; ++c, next += 4 * pitch) {
#pragma unroll
    for (int i = 0; i < 4; ++i) w[kP - 1 + i] = load_columns<kVec>(next + i * pitch, lane);
    const float4 t = taps[c];
#pragma unroll
    for (int p = 0; p < kP; ++p) {
      fma4(acc[p], t.x, w[p]);
      fma4(acc[p], t.y, w[p + 1]);
      fma4(acc[p], t.z, w[p + 2]);
      fma4(acc[p], t.w, w[p + 3]);
    }
#pragma unroll
    for (int i = 0; i < kP - 1; ++i) w[i] = w[i + 4];
  }
}

// The column filter's kP outputs for image rows y .. y + kP - 1 (tile rows row0 ..), stored where
// they exist.
template <int kVec, int kP>
__device__ __forceinline__ void column_filter_store(const float* tile, int pitch, int row0, const float4* taps,
                                                    int chunks, float* out, int64_t x0, int64_t y,
                                                    int64_t width, int64_t height, int lane) {
  float4 acc[kP], w[kP + 3];
  column_filter<kVec, kP>(tile, pitch, row0, taps, chunks, lane, acc, w);
#pragma unroll
  for (int p = 0; p < kP; ++p)
    if (y + p < height) store_columns<kVec>(out + (y + p) * width, x0, width, acc[p], lane);
}

// Row pass: a block of 8 warps covers 128 columns x 32 rows; each warp stages and filters 4 rows.
template <int kVec>
__global__ void __launch_bounds__(kRowWarps * kLanes, kRowMinBlocks)
row_pass_blocked(const float* __restrict__ in, float* __restrict__ tmp, const float* __restrict__ taps,
                 int64_t width, int64_t height, int k) {
  extern __shared__ float4 smem[];
  const TapLayout t = tap_layout(k);
  const int seg_len = kTileW + t.row_len;  // a lane's window ends at 4 * 31 + row_len + 3
  const int lane = threadIdx.x, warp = threadIdx.y;
  float* row_taps = reinterpret_cast<float*>(smem);
  float* seg = row_taps + t.row_len + warp * kRowsPerWarp * seg_len;
  stage_taps(row_taps, taps, k, t.shift, t.row_len);
  __syncthreads();

  constexpr int kTileH = kRowWarps * kRowsPerWarp;
  const int64_t x0 = int64_t(blockIdx.x) * kTileW, tiles_y = ceil_div(height, kTileH);
  for (int64_t ty = blockIdx.y; ty < tiles_y; ty += gridDim.y) {
    const int64_t y0 = ty * kTileH + warp * kRowsPerWarp;
    // Step 1: this warp's rows, columns x0 - R4 .. x0 - R4 + 128 + K', zeros outside the image.
    stage_rows<kVec, kStageBatch<kVec>>(seg, seg_len, 0, 1, kRowsPerWarp, in, y0, height, x0 - t.r4, seg_len, width, lane);
    __syncwarp();
    // Step 2: four outputs per lane and row from the sliding window; Step 3: store them.
#pragma unroll 1
    for (int q = 0; q < kRowsPerWarp; ++q) {
      if (y0 + q >= height) break;  // warp-uniform
      float* staged = seg + q * seg_len;
      const float4 v = row_filter4(staged + 4 * lane, reinterpret_cast<const float4*>(row_taps), t.row_len / 4);
      if constexpr (kVec == 4) {
        store_columns<4>(tmp + (y0 + q) * width, x0, width, v, lane);
      } else {
        // Scalar path: through the staged row (its inputs are no longer needed), so that each
        // store instruction of the warp writes 32 consecutive floats.
        __syncwarp();
        reinterpret_cast<float4*>(staged)[lane] = v;
        __syncwarp();
        store_columns<1>(tmp + (y0 + q) * width, x0, width, load_columns<1>(staged, lane), lane);
      }
    }
    __syncwarp();  // the next tile row restages the segments
  }
}

// Column pass: a block of kWarps warps covers 128 columns x kWarps * kP rows; each thread a kP x 4
// patch. kMinBlocks: resident blocks per SM asked of ptxas (see kRowMinBlocks).
template <int kVec, int kWarps, int kP, int kMinBlocks>
__global__ void __launch_bounds__(kWarps * kLanes, kMinBlocks)
column_pass_blocked(const float* __restrict__ tmp, float* __restrict__ out, const float* __restrict__ taps,
                    int64_t width, int64_t height, int k) {
  constexpr int kTileH = kWarps * kP;
  extern __shared__ float4 smem[];
  const TapLayout t = tap_layout(k);
  const int rows = kTileH + t.col_len - 1;  // the tile and its halo (and the zero taps' rows)
  const int lane = threadIdx.x, warp = threadIdx.y;
  float* col_taps = reinterpret_cast<float*>(smem);
  float* tile = col_taps + t.col_len;        // rows x 128 floats
  stage_taps(col_taps, taps, k, 0, t.col_len);
  __syncthreads();

  const int64_t x0 = int64_t(blockIdx.x) * kTileW, tiles_y = ceil_div(height, kTileH);
  for (int64_t ty = blockIdx.y; ty < tiles_y; ty += gridDim.y) {
    const int64_t y0 = ty * kTileH;
    // Step 1: intermediate rows y0 - R .. y0 - R + rows - 1 of the tile's columns, zeros outside.
    stage_rows<kVec, kStageBatch<kVec>>(tile, kTileW, warp, kWarps, rows, tmp, y0 - t.r, height, x0, kTileW, width, lane);
    __syncthreads();
    // Step 2: kP outputs down 4 columns per thread; Step 3: store the rows that exist.
    column_filter_store<kVec, kP>(tile, kTileW, warp * kP, reinterpret_cast<const float4*>(col_taps), t.col_len / 4,
                                  out, x0, y0 + warp * kP, width, height, lane);
    __syncthreads();  // the next tile row restages the tile
  }
}

template <int kVec>
void launch_row_pass(const Args& a) {
  const TapLayout t = tap_layout(a.taps);
  const size_t bytes = sizeof(float) * (t.row_len + kRowWarps * kRowsPerWarp * (kTileW + t.row_len));
  ladder::require_shared_memory(reinterpret_cast<const void*>(row_pass_blocked<kVec>), bytes, *a.dev, "the row pass");
  const dim3 grid = tile_grid(a.width, a.height, kTileW, kRowWarps * kRowsPerWarp);
  row_pass_blocked<kVec><<<grid, dim3(kLanes, kRowWarps), bytes, a.stream>>>(a.in, a.tmp, a.row_taps,
                                                                             a.width, a.height, a.taps);
  CUDA_CHECK_LAUNCH();
}

template <int kVec, int kWarps, int kP, int kMinBlocks>
struct ColumnPass {
  static constexpr const char* kWhat = "the column pass";
  static size_t bytes(int k) {
    const TapLayout t = tap_layout(k);
    return sizeof(float) * (t.col_len + (kWarps * kP + t.col_len - 1) * kTileW);
  }
  static Candidate candidate(const Args& a, const char* name) {
    return {name, reinterpret_cast<const void*>(column_pass_blocked<kVec, kWarps, kP, kMinBlocks>), kWarps * kLanes,
            bytes(a.taps)};
  }
  static void launch(const Args& a) {
    const size_t bytes = ColumnPass::bytes(a.taps);
    ladder::require_shared_memory(reinterpret_cast<const void*>(column_pass_blocked<kVec, kWarps, kP, kMinBlocks>), bytes,
                          *a.dev, kWhat);
    const dim3 grid = tile_grid(a.width, a.height, kTileW, kWarps * kP);
    column_pass_blocked<kVec, kWarps, kP, kMinBlocks><<<grid, dim3(kLanes, kWarps), bytes, a.stream>>>(
        a.tmp, a.out, a.col_taps, a.width, a.height, a.taps);
    CUDA_CHECK_LAUNCH();
  }
};

// The --tile shapes of the column pass (and of step 09's fused pass): 128 columns x (warps x P)
// rows, P outputs per thread down a column, and the resident blocks per SM its registers allow.
// Without --tile (auto) the step takes the one with the most resident warps per SM on this GPU at
// this K (pick_most_resident in the harness: ladder::blocks_per_sm from the registers and the
// shared memory each needs), ties to the one listed first. On the H100 at K = 17 and 31 that is
// the shortest tile, 4 blocks of 8 warps per SM (the 16-warp 128x64_p4 ties at 2 blocks): the
// fastest of the three for both steps at 8192², K = 17 in the chapter's tile sweep. At large K on
// a smaller GPU the short tile may be the only one that fits, or none (exit 2 with the bytes).
// Calls Pass<kVec, warps, P, blocks>::launch(a) for the chosen shape; Pass also gives
// candidate(a, name) (its kernel, threads and shared memory at this K) and kWhat (for messages).
constexpr const char* kTiles = "128x32_p4 128x64_p8 128x64_p4";
template <template <int, int, int, int> class Pass, int kVec>
void launch_tile(const Args& a) {
  using Short = Pass<kVec, 8, 4, 4>;
  using Tall = Pass<kVec, 8, 8, 2>;
  using Wide = Pass<kVec, 16, 4, 2>;
  std::string tile = a.tile;
  if (tile == "auto") {
    // Asked once per K (the host calls stay out of the timed launches).
    static std::map<int, std::pair<std::string, std::string>> chosen;  // K -> tile, why
    auto it = chosen.find(a.taps);
    if (it == chosen.end()) {
      const std::vector<Candidate> c = {Short::candidate(a, "128x32_p4"), Tall::candidate(a, "128x64_p8"),
                                        Wide::candidate(a, "128x64_p4")};
      std::string why;
      const size_t i = pick_most_resident(*a.dev, c, Short::kWhat, &why);
      it = chosen.emplace(a.taps, std::make_pair(c[i].name, why)).first;
    }
    tile = it->second.first;
    if (a.choice) *a.choice = it->second.second;
  } else if (a.choice) {
    *a.choice = tile + ": named by --tile";
  }
  if (tile == "128x32_p4") Short::launch(a);
  else if (tile == "128x64_p8") Tall::launch(a);
  else if (tile == "128x64_p4") Wide::launch(a);
  else throw ladder::UsageError("unknown --tile " + tile);
}

void launch(const Args& a) {
  // 16-byte accesses need every row to start 16-byte aligned: width a multiple of 4.
  if (a.width % 4 == 0 && ladder::aligned16(a.in) && ladder::aligned16(a.tmp) && ladder::aligned16(a.out)) {
    launch_row_pass<4>(a);
    launch_tile<ColumnPass, 4>(a);
  } else {
    launch_row_pass<1>(a);
    launch_tile<ColumnPass, 1>(a);
  }
}

const Step kStep{"separable_conv/08_register_blocked", launch,
                 "row pass: 4 outputs per lane, 128 x 32 tiles; column pass: P x 4 outputs per thread; "
                 "float4 global accesses when width % 4 == 0; taps in chunks of 4 from shared memory",
                 nullptr, Transfers::none, kTiles};
LADDER_STEP(kStep);

}  // namespace separable_conv::register_blocked
