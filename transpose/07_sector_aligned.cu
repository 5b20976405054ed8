// transpose step 07: sector-aligned segments — every warp reads and writes whole 32-byte sectors.
// Step 06 is fast at 8192 x 8192, where every row starts on a sector boundary. At other shapes a
// row of `in` or `out` starts anywhere in a sector, so a warp's row piece is not a whole number of
// sectors: its first and last sectors are shared with the neighbouring tile, i.e. with another block
// that reaches them at another time. A shared sector that is read costs one more L2 request (the
// second reader hits in L2). A shared sector that is written reaches L2 in two parts, and with ECC
// DRAM is written in whole sectors: a part that L2 cannot complete in time is merged with the sector
// read from DRAM first (read-modify-write): DRAM reads that a transpose does not need (README:
// the counters).
// This step aligns the tile to the memory instead of to the matrix:
//  - out side: block (k, j) owns, in each of its 64 rows c of `out`, the 64 floats that start at the
//    sector boundary at or before r = 64k: r in [64k - ph(c), 64k + 64 - ph(c)), ph(c) < 8 being out
//    row c's offset from a boundary. One warp writes such a segment with one float2 store: 8 whole
//    sectors, none shared with another block.
//  - in side: the tile holds 8 more rows of `in` above it (a halo: the rows an early-starting segment
//    needs; the block above reads them too, so they come from L2). A row of `in` is read as 8-byte
//    pairs aligned to the address: a row that starts on an odd float is read from one float earlier,
//    and lane 0 fetches the row's 64th float alone.
//  - one row per warp per access on each side, and a warp's rows 8 apart: its skew is the same for
//    all 32 lanes and all its rows, and 06's de-interleaved tile keeps every shared access free of
//    bank conflicts.
//  - loads keep L2's default policy (__ldg, not 06's evict-first __ldcs): the halo and the shared
//    edge sectors are read twice, and should still be in L2 the second time.
// Tiles inside the matrix move whole pairs with no bounds checks; at the edges the same code checks
// each pair and moves a pair that crosses the edge one float at a time.
// Changes from step 06: the out segments skewed to sector boundaries, the 8-row halo (only when rows
// are not a multiple of 8), float2 with one row per warp instead of float4 with two, per-pair bounds
// at the edges.
// Costs: up to 1/8 more rows of `in` (the halo) and one more sector per row piece of `in` whose row
// does not start on a sector boundary, read from L2, not DRAM; twice the global load/store instructions of 06's
// float4 path; 40 registers and 18.7 KB of shared memory per block: 6 blocks of 256 threads per SM.
// Source: beyond the posts; the tiled transpose of "CUDA编程入门" (使用SharedMemory优化矩阵转置).
// Run: build/bin/transpose_07_sector_aligned --rows 8191 --cols 8193
#include "transpose/transpose.cuh"

#include <cstdint>

namespace transpose::sector_aligned {

constexpr int kVec = 2;              // floats per access: a warp's access is one 256-byte row piece
constexpr int kTile = 32 * kVec;     // 64: tile side, one row piece per warp and access
constexpr int kWarps = 8;            // 32 x 8 = 256 threads
constexpr int kMinBlocksPerSm = 6;   // 40 registers, as 06's float4 kernel: 6 blocks per SM (the
                                     // halo kernel would take 43 unbounded: 5 blocks per SM)
constexpr int kSector = 8;           // floats per 32-byte sector
constexpr int kHalo = kSector;       // in rows above the tile: a segment starts up to 7 rows early
static_assert(kTile % kSector == 0, "an out segment is a whole number of sectors");
static_assert(kHalo >= kSector - 1, "the halo holds the rows of the earliest-starting segment");
static_assert(kTile % kWarps == 0 && kHalo % kWarps == 0, "every warp moves the same number of rows");
static_assert(kSector % kVec == 0, "a sector-aligned segment starts pair-aligned");
static_assert(kWarps % kSector == 0,
              "rows kWarps apart start at the same offset in a sector: one skew per warp");

// Elements idx and idx + 1 of `in` as one 8-byte load when one is wanted and both lie in the matrix
// (an unwanted one belongs to a neighbouring row or tile and is dropped), else the wanted ones alone.
__device__ __forceinline__ float2 load_pair(const float* in, int64_t idx, int64_t n, bool want0,
                                           bool want1) {
  if ((want0 || want1) && idx >= 0 && idx + 1 < n)
    return __ldg(reinterpret_cast<const float2*>(in + idx));
  float2 v = make_float2(0.f, 0.f);
  if (want0) v.x = __ldg(in + idx);
  if (want1) v.y = __ldg(in + idx + 1);
  return v;
}

// Elements idx and idx + 1 of `out` as one 8-byte store when this block owns both, else the owned
// one alone (at the matrix edge). Streaming hint: every byte is written once.
__device__ __forceinline__ void store_pair(float* out, int64_t idx, float2 v, bool own0, bool own1) {
  if (own0 && own1) {
    __stcs(reinterpret_cast<float2*>(out + idx), v);
  } else {
    if (own0) __stcs(out + idx, v.x);
    if (own1) __stcs(out + idx + 1, v.y);
  }
}

// How many floats element idx of p lies past a boundary of kFloats floats (by address, not index).
template <int kFloats>
__device__ __forceinline__ int floats_past(const float* p, int64_t idx) {
  return static_cast<int>((reinterpret_cast<uintptr_t>(p) / sizeof(float) + idx) & (kFloats - 1));
}

// Where tile row or column i (>= 0) lives among kCount: even indices in the first half, odd ones in
// the second, so the 32 lanes of a warp, which touch every other row (or column), touch 32
// consecutive slots.
template <int kCount>
__device__ __forceinline__ int slot(int i) { return (i & 1) * (kCount / 2) + (i >> 1); }

// One tile, into `tile` and out again. kChecked = false: a tile inside the matrix, every pair whole
// and no bounds to check; true: a tile at an edge of the matrix (or of the allocation).
template <bool kSkewRows, bool kChecked>
__device__ __forceinline__ void move_tile(const float* __restrict__ in, float* __restrict__ out,
                                          int64_t rows, int64_t cols, int64_t r0, int64_t c0,
                                          float (*tile)[kTile + 1]) {
  constexpr int kHaloRows = kSkewRows ? kHalo : 0;  // every out row starts on a boundary: no halo
  constexpr int kInRows = kTile + kHaloRows;         // rows of `in` in the tile: 72 or 64
  constexpr int kInPasses = kInRows / kWarps, kOutPasses = kTile / kWarps;
  const int lane = threadIdx.x, w = threadIdx.y;
  const int64_t n = rows * cols;
  // The rows and columns of this tile that exist, relative to r0 and c0 (rows from -kHaloRows):
  // r0 + rr exists iff row_lo <= rr < row_hi, c0 + cc iff cc < col_hi. Clamped to the tile.
  const int row_lo = static_cast<int>(r0 < kHaloRows ? -r0 : -kHaloRows);
  const int row_hi = static_cast<int>(rows - r0 < kTile ? rows - r0 : kTile);
  const int col_hi = static_cast<int>(cols - c0 < kTile ? cols - c0 : kTile);

  // Step 1: warp w reads rows w, w + 8, ... of the tile, all loads before any use. Its first row
  // starts a = 0 or 1 floats past a pair boundary, and so do the others (8 x cols floats further
  // on is an even number). With a = 1 the row is read from one float early: lane q holds columns
  // 2q - a and 2q - a + 1, and lane 0, whose column -1 is not the tile's, fetches column 63 into it.
  const int64_t in_first = (r0 - kHaloRows + w) * cols + c0;  // element (first row, c0)
  const int a = floats_past<kVec>(in, in_first);
  const int cc = kVec * lane - a;            // this lane's first column
  const int cx = cc >= 0 ? cc : kTile - 1;   // the column its x holds
  float2 v[kInPasses];
#pragma unroll
  for (int p = 0; p < kInPasses; ++p) {
    const int rr = w + p * kWarps - kHaloRows;
    const int64_t idx = in_first + p * kWarps * cols + cc;
    v[p] = make_float2(0.f, 0.f);
    if (!kChecked) {
      v[p] = __ldg(reinterpret_cast<const float2*>(in + idx));
      if (cx != cc) v[p].x = __ldg(in + idx - cc + cx);
    } else if (rr >= row_lo && rr < row_hi) {
      v[p] = load_pair(in, idx, n, cc >= 0 && cc < col_hi, cc + 1 < col_hi);
      if (cx != cc && cx < col_hi) v[p].x = __ldg(in + idx - cc + cx);
    }
  }

  // Step 2: into the tile; a warp's stores go to one slot row, 32 consecutive column slots.
#pragma unroll
  for (int p = 0; p < kInPasses; ++p) {
    const int rr = w + p * kWarps - kHaloRows;
    if (kChecked && (rr < row_lo || rr >= row_hi)) continue;
    float* row = tile[slot<kInRows>(w + p * kWarps)];
    if (!kChecked || cx < col_hi) row[slot<kTile>(cx)] = v[p].x;
    if (!kChecked || cc + 1 < col_hi) row[slot<kTile>(cc + 1)] = v[p].y;
  }
  __syncthreads();

  // Step 3: warp w writes rows c0 + w, c0 + w + 8, ... of `out`. Row c's segment starts ph rows
  // before r0, on a sector boundary, and ph is the same for all of the warp's rows (8 x rows
  // floats further on is a whole number of sectors). Lane q writes floats 2q and 2q + 1 of each
  // segment, rows r0 - ph + 2q (+1), tile rows kHaloRows - ph + 2q (+1): the warp reads one slot
  // column and 32 consecutive slot rows.
  const int64_t out_first = (c0 + w) * rows + r0;  // element (c0 + w, r0) of `out`
  const int ph = kSkewRows ? floats_past<kSector>(out, out_first) : 0;
  const int rr = kVec * lane - ph;               // this lane's first row, relative to r0
  const int s0 = slot<kInRows>(rr + kHaloRows), s1 = slot<kInRows>(rr + kHaloRows + 1);
  const bool own0 = !kChecked || (rr >= row_lo && rr < row_hi);
  const bool own1 = !kChecked || (rr + 1 >= row_lo && rr + 1 < row_hi);
#pragma unroll
  for (int p = 0; p < kOutPasses; ++p) {
    const int c = w + p * kWarps;
    if (kChecked && c >= col_hi) continue;
    const int col = slot<kTile>(c);
    const int64_t idx = out_first + p * kWarps * rows + rr;
    if (!kChecked) {
      __stcs(reinterpret_cast<float2*>(out + idx), make_float2(tile[s0][col], tile[s1][col]));
    } else {
      const float2 x = make_float2(own0 ? tile[s0][col] : 0.f, own1 ? tile[s1][col] : 0.f);
      store_pair(out, idx, x, own0, own1);
    }
  }
}

template <bool kSkewRows>
__global__ void __launch_bounds__(32 * kWarps, kMinBlocksPerSm)
transpose_sector_aligned(const float* __restrict__ in, float* __restrict__ out, int64_t rows,
                         int64_t cols, bool rows_on_x) {
  constexpr int kHaloRows = kSkewRows ? kHalo : 0;
  // Rows of 65 words: consecutive slot rows start in consecutive banks.
  __shared__ float tile[kTile + kHaloRows][kTile + 1];
  const BlockTile t = block_tile(rows_on_x);
  const int64_t r0 = t.row * kTile, c0 = t.col * kTile;
  // Inside the matrix: every row of the tile and its halo exists, every column too, and the first
  // pair read (which starts one float early on an odd row) is not before the start of `in`.
  const int64_t top = r0 - kHaloRows;
  const bool in_pair_aligned = reinterpret_cast<uintptr_t>(in) % (kVec * sizeof(float)) == 0;
  const bool interior = top >= 0 && r0 + kTile <= rows && c0 + kTile <= cols &&
                        (top * cols + c0 > 0 || in_pair_aligned);
  if (interior)
    move_tile<kSkewRows, false>(in, out, rows, cols, r0, c0, tile);
  else
    move_tile<kSkewRows, true>(in, out, rows, cols, r0, c0, tile);
}

void launch(const ladder::DeviceInfo&, const float* in, float* out, int64_t rows, int64_t cols,
            cudaStream_t stream) {
  // Every out row starts on a sector boundary when rows is a multiple of 8 and `out` is 32-byte
  // aligned (cudaMalloc's are): then no segment starts early and the halo is not needed.
  const bool skew =
      rows % kSector != 0 || reinterpret_cast<uintptr_t>(out) % (kSector * sizeof(float)) != 0;
  const dim3 block(32, kWarps);
  // Segments that start up to 7 rows early need up to 7 more rows' worth of tile rows at the bottom.
  const TileGrid g = tile_grid(rows + (skew ? kSector - 1 : 0), cols, kTile, kTile);
  if (skew)
    transpose_sector_aligned<true><<<g.grid, block, 0, stream>>>(in, out, rows, cols, g.rows_on_x);
  else
    transpose_sector_aligned<false><<<g.grid, block, 0, stream>>>(in, out, rows, cols, g.rows_on_x);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"transpose/07_sector_aligned", launch,
                 "32 x 8 threads, 64 x 64 tile (+8-row halo), float2 row pieces skewed to 32-byte "
                 "sectors, de-interleaved tile[72][65]"};
LADDER_STEP(kStep);

}  // namespace transpose::sector_aligned
