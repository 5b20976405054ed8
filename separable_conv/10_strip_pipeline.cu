// separable_conv step 10: column strips walked top to bottom — halo rows filtered once, loads in flight.
// Step 09 computes each 128 x TH output tile from scratch: it stages TH + K - 1 input rows and
// row-filters all of them, so the K - 1 halo rows are loaded (from L2) and row-filtered twice,
// once for each tile that needs them — at K = 31 and TH = 32 that is nearly twice the row-pass
// work. And it loads, then computes, then loads again: while a block filters, it has no loads in
// flight. Here:
//  * One block owns a 128-column strip of a segment of rows and walks down it, tile after tile.
//    The row results of the last K - 1 rows of one tile are the first K - 1 the next tile needs:
//    they stay in shared memory (moved to the top of the buffer after each tile), so every input
//    row is row-filtered once and every input pixel loaded once (plus the strips' side halos).
//    The segments are sized so that all blocks are resident at once: one wave, no tail.
//  * Input rows arrive in groups of 32 through cp.async (global -> shared, no registers): while
//    the block filters group g, group g + 1 (and g + 2 with 3 stages) is already on its way.
//  * Any width: each row is copied in 16-byte pieces from the 16-byte boundary at or below its
//    first column (the few pieces that cross the left or right border go 4 bytes at a time, zeros
//    outside the image), and the row filter is compiled for each of the four offsets S at which a
//    row can then start. No 4-byte staging path for the rest of an odd-width row.
//  * Exactly K taps: chunks of 4 and a tail of 1 or 3 (K is odd); step 08's filters padded the taps
//    with zeros to whole chunks (K = 17: 20 FMAs per output and pass instead of 17).
//  * The row filter's window is a ring of 2-3 float4 registers turned by a loop that takes 2-3
//    chunks per iteration: no register moves between chunks (at S = 1 ptxas 13.0 still copies 3
//    floats a row per 2 chunks: 6 MOVs per 64 FMAs); two rows share each float4 of taps.
// Changes from step 09: a block walks a strip instead of computing one tile; cp.async groups;
// the halo rows' row results kept; exact taps; 16-byte loads for every width.
// Costs: shared memory for TH + K - 1 rows of row results plus 2-3 groups of 32 input rows
// (62.6 KB at K = 17 with TH = 32: 3 blocks per SM; 148-198 KB at K = 127, 1 block per SM); 80
// registers a thread with the default tile (118-128 with P = 8); the buffer move after each tile
// (K - 1 rows); four compiled copies of the row filter. Output stores as in step 08: float4 when
// width % 4 == 0, else 4-byte stores, 128 consecutive bytes per warp and instruction.
// --tile picks the tile (128 x TH, TH = warps x P), P outputs per thread down a column, and the
// number of cp.async stages; without it, the shape with the most resident warps per SM on this GPU
// (recorded as `choice`). cp.async needs sm_80: on older GPUs the step exits 2 saying so.
// Source: beyond the posts; the apron paid once per segment instead of per tile: Victor Podlozhnyuk,
// "Image Convolution with CUDA" (NVIDIA, 2007), counted again; cp.async: PTX ISA ("cp.async",
// "cp.async.commit_group", "cp.async.wait_group") and the CUDA C++ Programming Guide ("Asynchronous
// Data Copies"). Run: build/bin/separable_conv_10_strip_pipeline [--tile 128x32_p4]
#include "09_fused.cu"  // step 08's column-pass helpers: load_columns, store_columns, fma4, stage_taps
#include "common/cp_async.cuh"

#include <algorithm>
#include <climits>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace separable_conv::strip_pipeline {

using register_blocked::kLanes;
using register_blocked::kTileW;  // 128 columns per strip: 4 per lane

constexpr int kGroupRows = 32;  // input rows per cp.async group (one stage buffer)
static_assert(kGroupRows % 8 == 0, "8 or 16 warps share a group's rows evenly");

// What K sets: the taps in chunks of 4 plus a tail, and the staged row's length.
struct Layout {
  int r;         // radius (K - 1) / 2
  int chunks;    // K / 4 whole chunks of 4 taps ...
  int tail;      // ... and K % 4 taps after them: 1 or 3 (K is odd)
  int taps_len;  // floats per tap array in shared memory: 4 (chunks + 1), zeros after the K taps
  int pitch;     // floats per staged input row: S + 128 + K - 1 for any offset S <= 3, whole float4s
};
__host__ __device__ inline Layout layout(int k) {
  return {k / 2, k / 4, k % 4, 4 * (k / 4 + 1), 4 * ((k + 130 + 3) / 4)};
}

// Where column x of row y sits in its 16-byte piece of memory (0-3): the offset S at which the row,
// staged from the piece's start, begins. Any width, any 4-byte aligned image pointer. kFloats = 8:
// in its 32-byte sector (0-7; step 11 stages rows from the sector's start).
template <unsigned kFloats = 4>
__device__ __forceinline__ int row_offset(const float* img, int64_t y, int64_t x, int64_t width) {
  static_assert(kFloats == 4 || kFloats == 8, "a 16-byte piece or a 32-byte sector");
  return static_cast<int>((static_cast<uint64_t>(reinterpret_cast<uintptr_t>(img) >> 2) +
                           static_cast<uint64_t>(y * width + x)) & (kFloats - 1));
}

// Issues the copies of input rows y0 .. y0 + rows - 1 into buf (rows `pitch` floats apart): row y
// from column cs = x0 - R - S(y), so that its pieces are 16-byte aligned; zeros outside the image.
// Warp w copies rows w, w + kWarps, ..; its lanes take consecutive pieces (512 bytes per access).
// The rows of a warp are a multiple of 4 apart, so they share S and cs: worked out once.
template <int kWarps>
__device__ __forceinline__ void stage_group(float* buf, int pitch, const float* __restrict__ in, int64_t y0, int rows,
                                            int64_t x0, int r, int64_t width, int64_t height, int lane, int warp) {
  static_assert(kWarps % 4 == 0, "the rows of a warp start at the same offset in their 16-byte piece");
  const int pieces = pitch / 4;
  const int64_t cs = x0 - r - row_offset(in, y0 + warp, x0 - r, width);
  const bool columns_inside = cs >= 0 && cs + pitch <= width;  // every piece of the row is in the image
  for (int i = warp; i < rows; i += kWarps) {
    const int64_t y = y0 + i;
    const bool row_inside = y >= 0 && y < height;
    float* dst = buf + i * pitch;
    if (row_inside && columns_inside) {
      const float* src = in + y * width + cs + 4 * lane;
      for (int c = lane; c < pieces; c += kLanes, src += 4 * kLanes) ladder::cp_async_16(dst + 4 * c, src);
      continue;
    }
    for (int c = lane; c < pieces; c += kLanes) {
      const int64_t x = cs + 4 * c;
      float* d = dst + 4 * c;
      if (row_inside && x >= 0 && x + 4 <= width) {
        ladder::cp_async_16(d, in + y * width + x);
      } else if (!row_inside || x + 4 <= 0 || x >= width) {
        *reinterpret_cast<float4*>(d) = make_float4(0.f, 0.f, 0.f, 0.f);
      } else {  // crosses a border: float by float. A 16-byte copy with a short src-size would
                // still address 16 bytes, past the image's end on its last row (compute-sanitizer
                // memcheck reports it), so only whole floats inside the row are copied.
        for (int e = 0; e < 4; ++e) {
          if (x + e >= 0 && x + e < width) ladder::cp_async_4(d + e, in + y * width + x + e);
          else d[e] = 0.f;
        }
      }
    }
  }
}

// acc[q] += t[j] * e[kS + q + j] for q < 4, j < kTaps: four adjacent outputs of a row, kTaps taps,
// a window that starts kS floats into its first float4. e is the window's floats in order; its
// float4 number p sits in v[(kBase + p) % kN], a ring of kN registers that the chunk loop turns
// instead of moving values from one register to the next.
template <int kS, int kTaps, int kN, int kBase>
__device__ __forceinline__ void fma_window(float4& acc, const float4& t, const float4 (&v)[3]) {
  const float4 &v0 = v[kBase % kN], &v1 = v[(kBase + 1) % kN], &v2 = v[(kBase + 2) % kN];
  const float e[12] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w, v2.x, v2.y, v2.z, v2.w};
  const float tt[4] = {t.x, t.y, t.z, t.w};
  float a[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
  for (int j = 0; j < kTaps; ++j)
#pragma unroll
    for (int q = 0; q < 4; ++q) a[q] = fmaf(tt[j], e[kS + q + j], a[q]);
  acc = make_float4(a[0], a[1], a[2], a[3]);
}

// Chunk c of 4 taps against two rows whose windows start at ring position kBase: the newest
// float4 of each window enters the ring (the kN - 1 before it are already there), then 32 FMAs.
template <int kS, int kN, int kBase>
__device__ __forceinline__ void row_chunk(const float4* w0, const float4* w1, const float4* taps, int c,
                                          float4 (&a)[3], float4 (&b)[3], float4& o0, float4& o1) {
  a[(kBase + kN - 1) % kN] = w0[c + kN - 1];
  b[(kBase + kN - 1) % kN] = w1[c + kN - 1];
  const float4 t = taps[c];
  fma_window<kS, 4, kN, kBase>(o0, t, a);
  fma_window<kS, 4, kN, kBase>(o1, t, b);
}

// Turns a ring whose window starts at position `base` back to position 0.
template <int kN>
__device__ __forceinline__ void rotate_to_start(float4 (&v)[3], int base) {
  const float4 v0 = v[0], v1 = v[1], v2 = v[2];
  if (base == 1) {
    v[0] = v1;
    v[1] = kN == 3 ? v2 : v0;
  } else if (base == 2) {
    v[0] = v2;
    v[1] = v0;
  }
}

// The last kT taps of a row pair: taps[chunks] against the float4s they reach, loading those the
// chunk loop has not (kHeld float4s of each window are in a[0..], b[0..]).
template <int kS, int kT, int kHeld>
__device__ __forceinline__ void row_tail(const float4* w0, const float4* w1, int chunks, const float4& t,
                                         float4 (&a)[3], float4 (&b)[3], float4& o0, float4& o1) {
  constexpr int kNeed = (kS + 2 + kT) / 4 + 1;  // float4s holding elements kS .. kS + 3 + kT - 1
#pragma unroll
  for (int i = kHeld; i < kNeed; ++i) {
    a[i] = w0[chunks + i];
    b[i] = w1[chunks + i];
  }
  fma_window<kS, kT, 3, 0>(o0, t, a);
  fma_window<kS, kT, 3, 0>(o1, t, b);
}

// Four adjacent outputs per lane of two staged rows with the same offset kS: out[q] = sum_{j<K}
// taps[j] * row[4 lane + kS + q + j]. A chunk of 4 taps reaches window elements kS .. kS + 6,
// i.e. kN = 2 float4s (kS <= 1) or 3; per chunk one new float4 per row enters a ring of kN
// registers, 32 FMAs use it, and the taps' float4 serves both rows. The loop takes kN chunks at
// a time so that every ring position is a compile-time register; the last 1 or 3 taps follow.
template <int kS>
__device__ __forceinline__ void row_filter_pair(const float* row0, const float* row1, const float4* taps, int chunks,
                                                int tail, int lane, float4& o0, float4& o1) {
  constexpr int kN = kS < 2 ? 2 : 3;
  const float4* w0 = reinterpret_cast<const float4*>(row0) + lane;
  const float4* w1 = reinterpret_cast<const float4*>(row1) + lane;
  const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
  float4 a[3] = {w0[0], zero, zero}, b[3] = {w1[0], zero, zero};
  if constexpr (kN == 3) {
    a[1] = w0[1];
    b[1] = w1[1];
  }
  o0 = zero;
  o1 = zero;
  int c = 0;
#pragma unroll 1
  for (; c + kN <= chunks; c += kN) {
    row_chunk<kS, kN, 0>(w0, w1, taps, c, a, b, o0, o1);
    row_chunk<kS, kN, 1>(w0, w1, taps, c + 1, a, b, o0, o1);
    if constexpr (kN == 3) row_chunk<kS, kN, 2>(w0, w1, taps, c + 2, a, b, o0, o1);
  }
  const int left = chunks - c;  // 0 .. kN - 1 chunks
  if (left >= 1) row_chunk<kS, kN, 0>(w0, w1, taps, c, a, b, o0, o1);
  if (kN == 3 && left >= 2) row_chunk<kS, kN, 1>(w0, w1, taps, c + 1, a, b, o0, o1);
  rotate_to_start<kN>(a, left);
  rotate_to_start<kN>(b, left);
  // The last 1 or 3 taps, taps[chunks], against the float4s they reach (kN - 1 are in a[0..]).
  if (tail == 1) row_tail<kS, 1, kN - 1>(w0, w1, chunks, taps[chunks], a, b, o0, o1);
  else row_tail<kS, 3, kN - 1>(w0, w1, chunks, taps[chunks], a, b, o0, o1);
}

// The row pass of one staged group: warp w filters rows w, w + kWarps, .. in pairs and writes
// the 128 results of row i to dst + i * 128. All rows of a warp share one offset s (their image
// rows are a multiple of 4 apart), so the switch is uniform across the warp.
template <int kWarps>
__device__ __forceinline__ void row_filter_group(const float* buf, int pitch, int rows, float* dst, const float4* taps,
                                                 const Layout& t, int s, int lane, int warp) {
  static_assert(kWarps % 4 == 0, "rows kWarps apart start at the same offset in their 16-byte piece");
  for (int i = warp; i < rows; i += 2 * kWarps) {
    const int i1 = i + kWarps < rows ? i + kWarps : i;  // a lone last row is filtered twice, stored once
    const float* r0 = buf + i * pitch;
    const float* r1 = buf + i1 * pitch;
    float4 o0, o1;
    switch (s) {
      case 0: row_filter_pair<0>(r0, r1, taps, t.chunks, t.tail, lane, o0, o1); break;
      case 1: row_filter_pair<1>(r0, r1, taps, t.chunks, t.tail, lane, o0, o1); break;
      case 2: row_filter_pair<2>(r0, r1, taps, t.chunks, t.tail, lane, o0, o1); break;
      default: row_filter_pair<3>(r0, r1, taps, t.chunks, t.tail, lane, o0, o1); break;
    }
    reinterpret_cast<float4*>(dst + i * kTileW)[lane] = o0;
    if (i1 != i) reinterpret_cast<float4*>(dst + i1 * kTileW)[lane] = o1;
  }
}

// kP outputs down a lane's 4 columns of the row results (rows 128 floats apart): acc[p] =
// sum_{j<K} taps[j] * tile[row0 + p + j]. Step 08's column filter over the whole chunks of 4 taps,
// then the last 1 or 3 taps against the rows its window ends with and 1 or 3 new ones: reads rows
// row0 .. row0 + kP + K - 2 and no others (step 08 read up to 3 more, for its zero taps).
template <int kVec, int kP>
__device__ __forceinline__ void column_filter_exact(const float* tile, int row0, const float4* taps, int chunks,
                                                    int tail, int lane, float4 (&acc)[kP]) {
  using register_blocked::fma4;
  using register_blocked::load_columns;
  float4 w[kP + 3];
  register_blocked::column_filter<kVec, kP>(tile, kTileW, row0, taps, chunks, lane, acc, w);
  const float* next = tile + (row0 + 4 * chunks + kP - 1) * kTileW;  // the first row only the tail reaches
  const float4 t = taps[chunks];
  w[kP - 1] = load_columns<kVec>(next, lane);
#pragma unroll
  for (int p = 0; p < kP; ++p) fma4(acc[p], t.x, w[p]);
  if (tail == 3) {
    w[kP] = load_columns<kVec>(next + kTileW, lane);
    w[kP + 1] = load_columns<kVec>(next + 2 * kTileW, lane);
#pragma unroll
    for (int p = 0; p < kP; ++p) {
      fma4(acc[p], t.y, w[p + 1]);
      fma4(acc[p], t.z, w[p + 2]);
    }
  }
}

// One block: the 128-column strip at blockIdx.x, output rows ya .. ya + seg_rows - 1 (ya =
// blockIdx.y * seg_rows), in tiles of kTileH = kWarps * kP rows. Input row u of the segment is
// image row ya - R + u; the rows go through shared memory in groups of 32 (the first group holds
// (K - 1) mod 32 rows, or 32), so that a tile's last input row always ends a group.
// Shared memory: row taps, column taps, mid_rows x 128 row results, kStages x 32 x pitch input rows.
template <int kVec, int kWarps, int kP, int kStages, int kMinBlocks>
__global__ void __launch_bounds__(kWarps * kLanes, kMinBlocks)
strip_pipeline_pass(const float* __restrict__ in, float* __restrict__ out, const float* __restrict__ row_taps_in,
                    const float* __restrict__ col_taps_in, int64_t width, int64_t height, int k, int64_t seg_rows,
                    int mid_rows) {
  constexpr int kTileH = kWarps * kP;
  constexpr int kThreads = kWarps * kLanes;
  static_assert(kTileH % kGroupRows == 0, "a tile's rows end a group");
  static_assert(kStages >= 2, "one group in flight while another is filtered");
  extern __shared__ float4 smem[];
  const Layout t = layout(k);
  const int lane = threadIdx.x, warp = threadIdx.y;
  float* row_taps = reinterpret_cast<float*>(smem);
  float* col_taps = row_taps + t.taps_len;
  float* mid = col_taps + t.taps_len;           // row results: mid row m holds input row off + m
  float* stage = mid + mid_rows * kTileW;       // kStages buffers of 32 staged input rows
  register_blocked::stage_taps(row_taps, row_taps_in, k, 0, t.taps_len);
  register_blocked::stage_taps(col_taps, col_taps_in, k, 0, t.taps_len);  // visible after the loop's first barrier

  const int64_t x0 = int64_t(blockIdx.x) * kTileW;
  const int64_t ya = int64_t(blockIdx.y) * seg_rows, y_in = ya - t.r;  // first output row, first input row
  const int64_t tiles = ceil_div(std::min(seg_rows, height - ya), kTileH);
  const int lead = (k - 1) % kGroupRows != 0 ? (k - 1) % kGroupRows : kGroupRows;  // rows of group 0
  const int64_t groups = 1 + (tiles * kTileH + k - 1 - lead) / kGroupRows;
  auto first_row = [&](int64_t g) -> int64_t { return g == 0 ? 0 : lead + (g - 1) * kGroupRows; };
  auto rows_of = [&](int64_t g) -> int { return g == 0 ? lead : kGroupRows; };
  auto buffer = [&](int64_t g) { return stage + static_cast<int>(g % kStages) * kGroupRows * t.pitch; };
  // Every thread commits one group per call, empty past the end, so the counts stay in step.
  auto issue = [&](int64_t g) {
    if (g < groups)
      stage_group<kWarps>(buffer(g), t.pitch, in, y_in + first_row(g), rows_of(g), x0, t.r, width, height, lane, warp);
    ladder::cp_async_commit();
  };

  for (int g = 0; g < kStages - 1; ++g) issue(g);
  int64_t tile = 0;  // the next output tile
  int64_t off = 0;   // the input row in mid row 0
  for (int64_t g = 0; g < groups; ++g) {
    // Step 1: ask for group g + kStages - 1 (its buffer was last read before the previous
    // iteration's second barrier), then wait for group g.
    issue(g + kStages - 1);
    ladder::cp_async_wait<kStages - 1>();
    __syncthreads();
    // Step 2: the row pass of group g, into the mid rows after those already there.
    const int64_t u0 = first_row(g);
    const int n = rows_of(g);
    const int s = row_offset(in, y_in + u0 + warp, x0 - t.r, width);
    row_filter_group<kWarps>(buffer(g), t.pitch, n, mid + (u0 - off) * kTileW, reinterpret_cast<const float4*>(row_taps),
                             t, s, lane, warp);
    __syncthreads();
    // Step 3: when the rows of the next tile are complete, its column pass and stores.
    const int64_t filled = u0 + n;
    if (filled != (tile + 1) * kTileH + k - 1) continue;
    float4 acc[kP];
    column_filter_exact<kVec, kP>(mid, static_cast<int>(tile * kTileH - off) + warp * kP,
                                  reinterpret_cast<const float4*>(col_taps), t.chunks, t.tail, lane, acc);
    const int64_t y = ya + tile * kTileH + warp * kP;
#pragma unroll
    for (int p = 0; p < kP; ++p)
      if (y + p < height) register_blocked::store_columns<kVec>(out + (y + p) * width, x0, width, acc[p], lane);
    ++tile;
    // Step 4: move the K - 1 rows the next tile shares with this one to the top of the buffer.
    // Float4 i moves from i + from * 32, and from * 32 = kTileH * 32 is a multiple of the block's
    // threads: the thread that overwrites an element is the one that read it, earlier in its
    // own ascending loop, so the rows may overlap without a barrier between reads and writes.
    if (tile < tiles && filled - off + kTileH > mid_rows) {
      __syncthreads();  // every warp is done reading the rows about to be overwritten
      const int from = static_cast<int>(tile * kTileH - off), live = static_cast<int>(filled - tile * kTileH);
      float4* m4 = reinterpret_cast<float4*>(mid);
      for (int i = warp * kLanes + lane; i < live * (kTileW / 4); i += kThreads) m4[i] = m4[from * (kTileW / 4) + i];
      off = tile * kTileH;
    }
  }
}

// How a launch covers the image: strips of 128 columns (gridDim.x), each cut into `count`
// segments of `rows` output rows (gridDim.y), a multiple of the tile height, so that strips x
// count blocks fit the GPU at once (one wave): more segments would add a second, mostly idle
// wave; fewer would leave SMs empty. Each segment re-reads and re-filters K - 1 rows above it.
struct Segments {
  unsigned strips, count;
  int64_t rows;
};
inline Segments segments(int64_t width, int64_t height, int tile_h, int64_t resident) {
  const int64_t strips = ceil_div(width, kTileW), tiles = ceil_div(height, tile_h);
  if (strips > INT_MAX)
    throw ladder::UsageError("an image " + std::to_string(width) + " pixels wide needs more than 2^31 - 1 blocks");
  const int64_t per_strip = std::clamp<int64_t>(resident / strips, 1, std::min<int64_t>(tiles, 65535));
  const int64_t rows = ceil_div(tiles, per_strip) * tile_h;
  return {static_cast<unsigned>(strips), static_cast<unsigned>(ceil_div(height, rows)), rows};
}

// Blocks of `kernel` that fit one SM with `bytes` of dynamic shared memory on this GPU (or profile:
// ladder::blocks_per_sm), asked once per kernel and size (a host call between the timing events
// would be timed). The kernel asks for the largest shared-memory carveout first: it reads global
// memory through cp.async.cg (L2 only) and needs next to no L1, and the count must be the one the
// launch will get. The caller has opted the kernel into `bytes` (ladder::require_shared_memory).
inline int resident_per_sm(const ladder::DeviceInfo& dev, const void* kernel, int threads, size_t bytes) {
  static std::map<std::pair<const void*, size_t>, int> known;
  auto it = known.find({kernel, bytes});
  if (it != known.end()) return it->second;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
  const int n = ladder::blocks_per_sm(dev, kernel, threads, bytes);
  known[{kernel, bytes}] = n;
  return n;
}

// How a strip pass whose blocks need `bytes` of shared memory covers the image on this GPU: the
// kernel opted into those bytes (or a refusal naming what this GPU allows), the blocks that fit an
// SM (none: a refusal), and the segments that make all blocks resident at once. Steps 11 and 12
// launch their kernels the same way.
struct StripGrid {
  Segments seg;
  int per_sm;  // resident blocks per SM
  // For a record's choice: "2 blocks of 8 warps per SM (74240 B of shared memory each), 64 strips x 4 segments".
  std::string describe(int warps, size_t bytes) const {
    return std::to_string(per_sm) + (per_sm == 1 ? " block" : " blocks") + " of " + std::to_string(warps) +
           " warps per SM (" + std::to_string(bytes) + " B of shared memory each), " + std::to_string(seg.strips) +
           " strips x " + std::to_string(seg.count) + " segments";
  }
};
inline StripGrid strip_grid(const Args& a, const void* kernel, int threads, size_t bytes, int tile_h,
                            const char* what) {
  ladder::require_shared_memory(kernel, bytes, *a.dev, what);
  const int per_sm = resident_per_sm(*a.dev, kernel, threads, bytes);
  if (per_sm < 1)
    throw ladder::UsageError(std::string(what) + " does not fit an SM of this GPU (" + a.dev->name + ") with " +
                             std::to_string(bytes) + " bytes of shared memory per block");
  return {segments(a.width, a.height, tile_h, int64_t(per_sm) * a.dev->sm_count), per_sm};
}

template <int kVec, int kWarps, int kP, int kStages, int kMinBlocks>
struct StripPass {
  static constexpr int kTileH = kWarps * kP;
  static constexpr const char* kWhat = "the strip pass";
  static const void* kernel() {
    return reinterpret_cast<const void*>(strip_pipeline_pass<kVec, kWarps, kP, kStages, kMinBlocks>);
  }
  static size_t bytes(int k) {
    const Layout t = layout(k);
    const int mid_rows = kTileH + k - 1;
    return sizeof(float) * (2 * static_cast<size_t>(t.taps_len) + static_cast<size_t>(mid_rows) * kTileW +
                            static_cast<size_t>(kStages) * kGroupRows * t.pitch);
  }
  // For the rule: the occupancy with the carveout the launch will ask for.
  static Candidate candidate(const Args& a, const char* name) {
    const size_t b = bytes(a.taps);
    if (b <= a.dev->smem_per_block_optin)  // the opt-in: ladder::blocks_per_sm in the rule
      CUDA_CHECK(cudaFuncSetAttribute(kernel(), cudaFuncAttributePreferredSharedMemoryCarveout,
                                      cudaSharedmemCarveoutMaxShared));
    return {name, kernel(), kWarps * kLanes, b};
  }
  static void launch(const Args& a) {
    const size_t bytes = StripPass::bytes(a.taps);
    const int mid_rows = kTileH + a.taps - 1;
    const Segments seg = strip_grid(a, kernel(), kWarps * kLanes, bytes, kTileH, kWhat).seg;
    strip_pipeline_pass<kVec, kWarps, kP, kStages, kMinBlocks><<<dim3(seg.strips, seg.count), dim3(kLanes, kWarps), bytes,
                                                                 a.stream>>>(
        a.in, a.out, a.row_taps, a.col_taps, a.width, a.height, a.taps, seg.rows, mid_rows);
    CUDA_CHECK_LAUNCH();
  }
};

// The --tile shapes: 128 x TH tiles (TH = warps x P), P outputs per thread down a column, 2 or 3
// cp.async stages (_s3), and the resident blocks per SM asked of ptxas (a register cap). Without
// --tile (auto): the shape with the most resident warps per SM on this GPU at this K
// (pick_most_resident in the harness), ties to the one listed first. On the H100 at K = 17 and
// 31 that is 128x32_p4, 3 blocks of 8 warps per SM (every other shape fits 16 warps): the fastest
// shape at both bar sizes in the chapter's tile sweep, where this step needs fewer warps than 08
// and 09 to keep loads in flight. The segments per strip follow from the chosen shape's blocks per
// SM and dev.sm_count (segments above).
constexpr const char* kTiles = "128x32_p4 128x32_p4_s3 128x64_p8 128x64_p8_s3 128x128_p8";
template <int kVec>
void launch_tile(const Args& a) {
  using P32 = StripPass<kVec, 8, 4, 2, 3>;
  using P32s3 = StripPass<kVec, 8, 4, 3, 2>;
  using P64 = StripPass<kVec, 8, 8, 2, 2>;
  using P64s3 = StripPass<kVec, 8, 8, 3, 2>;
  using P128 = StripPass<kVec, 16, 8, 2, 1>;
  std::string tile = a.tile;
  if (tile == "auto") {
    static std::map<int, std::pair<std::string, std::string>> chosen;  // K -> tile, why (asked once per K)
    auto it = chosen.find(a.taps);
    if (it == chosen.end()) {
      const std::vector<Candidate> c = {P32::candidate(a, "128x32_p4"), P32s3::candidate(a, "128x32_p4_s3"),
                                        P64::candidate(a, "128x64_p8"), P64s3::candidate(a, "128x64_p8_s3"),
                                        P128::candidate(a, "128x128_p8")};
      std::string why;
      const size_t i = pick_most_resident(*a.dev, c, P32::kWhat, &why);
      it = chosen.emplace(a.taps, std::make_pair(c[i].name, why)).first;
    }
    tile = it->second.first;
    if (a.choice) *a.choice = it->second.second;
  } else if (a.choice) {
    *a.choice = tile + ": named by --tile";
  }
  if (tile == "128x32_p4") P32::launch(a);
  else if (tile == "128x64_p8") P64::launch(a);
  else if (tile == "128x128_p8") P128::launch(a);
  else if (tile == "128x32_p4_s3") P32s3::launch(a);
  else if (tile == "128x64_p8_s3") P64s3::launch(a);
  else throw ladder::UsageError("unknown --tile " + tile);
}

void launch(const Args& a) {
  // cp.async (the copies that fill the stages) exists from sm_80 on: the add_step line declares
  // NEEDS sm_80, and on older GPUs the harness exits 2 with that reason before this runs (step 09 is
  // their best step: the same filters without the copies).
  // Loads are 16-byte for every width; stores are float4 where every output row starts 16-byte
  // aligned (width a multiple of 4), else 4-byte with a warp writing 32 consecutive floats.
  if (a.width % 4 == 0 && ladder::aligned16(a.out)) launch_tile<4>(a);
  else launch_tile<1>(a);
}

const Step kStep{"separable_conv/10_strip_pipeline", launch,
                 "one pass; a block walks a 128-column strip down a segment of rows: cp.async groups of "
                 "32 input rows, halo rows' row results kept for the next tile, exact K taps",
                 nullptr, Transfers::none, kTiles, /*intermediate=*/false};
LADDER_STEP(kStep);

}  // namespace separable_conv::strip_pipeline
