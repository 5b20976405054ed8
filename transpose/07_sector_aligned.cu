// transpose step 07: sector-aligned segments — every warp reads and writes whole sectors, and the
// out side in aligned 64-byte pairs of them.
// Step 06 is fast at 8192 x 8192, where every row starts on a sector boundary. At other shapes a
// row of `in` or `out` starts anywhere in a sector, so a warp's row piece is not a whole number of
// sectors: its first and last sectors are shared with the neighbouring tile, i.e. with another block
// that reaches them at another time. A shared sector that is read costs one more L2 request (the
// second reader hits in L2). A shared sector that is written reaches L2 in two parts, and with ECC
// DRAM is written in whole sectors: a part that L2 cannot complete in time is merged with the sector
// read from DRAM first (read-modify-write): DRAM reads that a transpose does not need. Whole
// sectors are not quite enough: stores that start 32 bytes past a 64-byte boundary still cost L2
// about 20% more written sectors than the data (appendix.md, "07 in detail" > "What the counters
// show"); 64-byte-aligned ones do not.
// This step aligns the tile to the memory instead of to the matrix (kAlign floats: 16 by default):
//  - out side: block (k, j) owns, in each of its tile's out rows c, the kR floats that start at the
//    kAlign boundary at or before r = kR k: r in [kR k - ph(c), kR k + kR - ph(c)), ph(c) < kAlign
//    being out row c's offset from a boundary. One warp writes such a segment with one vector store
//    (float2 for kR = 64, float4 for 128): whole aligned pairs of sectors, none shared with another
//    block.
//  - in side: the tile holds kAlign more rows of `in` above it (a halo: the rows an early-starting
//    segment needs). A row of `in` is read in vectors aligned to the address: a row that starts a
//    floats past a vector boundary is read from a floats earlier, and the a floats past the last
//    vector come from one more load per warp and tile, a few lanes fetching them for all its rows.
//  - one row per warp per access on each side, and a warp's rows kAlign apart (kAlign warps per
//    block): its skew is the same for all 32 lanes and all its rows, and a tile de-interleaved like
//    06's keeps every shared access free of bank conflicts.
//  - the _sN variants walk a block down a strip of N tiles and carry the halo in registers from one
//    tile to the next; on the H100 they measured slower than one tile per block (appendix.md,
//    "Variants (--variant)").
// Tiles inside the matrix move whole vectors with no bounds checks; at the edges the same code
// checks each vector and moves one that crosses the edge one float at a time.
// Changes from step 06: the out segments skewed to 64-byte boundaries, the 16-row halo (only when
// rows are not a multiple of 16), 16 warps per block, row pieces of `in` read from the vector
// boundary before them, per-vector bounds at the edges.
// Costs: one more load per warp and tile; the halo and, where a row of `in` does not start on a
// sector boundary, one more sector per row piece, both read from L2, not DRAM; 80 x 129 floats of
// shared memory (41.3 KB) and 64 registers: 2 blocks of 512 threads per SM (the default 64 x 128
// tile).
// Tuning: --variant NAME picks a tile, an alignment and a strip length at run time (kVariants
// below: tile rows x columns, _aN = N-float alignment with N warps, else 32-byte sectors with 8;
// _sN = N tiles per block, _cs = evict-first loads, _b5 = 5 blocks per SM). Without --variant the
// step picks one from the device (choose(), at the end): 64x128_a16 where two of its blocks fit on
// an SM (an H100, an A100, an RTX 3060), 64x64_a16 where only one does (a T4: 64 KB per SM).
// Source: beyond the posts; the tiled transpose of "CUDA编程入门" (使用SharedMemory优化矩阵转置).
// Run: build/bin/transpose_07_sector_aligned --rows 8191 --cols 8193 [--variant 64x64]
#include "transpose/transpose.cuh"

#include <cstdint>
#include <cstdio>
#include <string>

namespace transpose::sector_aligned {

constexpr int kSector = 8;  // floats per 32-byte sector: the finest alignment an out segment gets

// Blocks per SM that __launch_bounds__ asks for, in 256-thread units: 6 x 256 threads of the 64 x 64
// tile (40 registers a thread; unbounded, the compiler keeps every address of the tile loop in a
// register: 106); the larger tiles hold twice the floats per thread: 4 x 256 threads, 64 registers.
// Blocks of kWarps warps: 8 / kWarps times as many blocks, rounded down (1 for 32 warps).
// This only caps registers: no launch depends on it, and the rule that picks the default variant
// asks the device how many blocks really fit (choose(), below).
template <int kR, int kC, int kWarps>
constexpr int kMinBlocksPerSm = (kR * kC <= 64 * 64 ? 6 : 4) * 8 / kWarps;

// The most threads an SM of the architecture being compiled holds (CUDA C++ Programming Guide,
// "Technical Specifications per Compute Capability"): an sm_75 SM holds 1,024, sm_86/89/120 1,536,
// the others 2,048. ptxas ignores a __launch_bounds__ that asks for more blocks than that, with a
// warning, so the request is capped per target; the host pass (no __CUDA_ARCH__) never reads it.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
constexpr int kTargetThreadsPerSm = 1024;
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890 || \
                                 __CUDA_ARCH__ >= 1200)
constexpr int kTargetThreadsPerSm = 1536;
#else
constexpr int kTargetThreadsPerSm = 2048;
#endif
constexpr int min_blocks_for_target(int blocks, int threads) {
  return blocks < kTargetThreadsPerSm / threads ? blocks : kTargetThreadsPerSm / threads;
}

// How many floats element idx of p lies past a boundary of kFloats floats (by address, not index).
template <int kFloats>
__device__ __forceinline__ int floats_past(const float* p, int64_t idx) {
  return static_cast<int>((reinterpret_cast<uintptr_t>(p) / sizeof(float) + idx) & (kFloats - 1));
}

// Where tile row or column i of kCount lives: i mod kVec picks a block of kCount / kVec slots,
// i / kVec the slot in it. A warp's vector access touches every kVec-th row (or column), so its 32
// lanes touch 32 consecutive slots. Masks and shifts, not % and /: a warp's rows (kWarps apart)
// are then a constant number of slots apart, and the compiler addresses a warp's rows from one
// register.
template <int kCount, int kVec>
__device__ __forceinline__ int slot(int i) {
  static_assert(kVec == 2 || kVec == 4, "float2 or float4");
  return (i & (kVec - 1)) * (kCount / kVec) + (i >> (kVec / 2));
}

// One configuration of the kernel: a tile of kR rows by kC columns of `in` (the kR x kC floats a
// block moves per tile), with the kAlign-row halo above it when out rows can start off a kAlign
// boundary (kSkewRows).
template <int kR, int kC, bool kSkewRows, int kAlign>
struct Geometry {
  static constexpr int kVecOut = kR / 32;  // floats per store: a warp's store is one whole segment
  static constexpr int kVecIn = kC / 32;   // floats per load: a warp's load is one row piece
  // kAlign floats: the boundary out segments start on (8: a 32-byte sector, 16: 64 bytes, 32: 128).
  // One warp per kAlign-th row, so that a warp's rows share their skew: kAlign warps per block.
  static constexpr int kWarps = kAlign;
  // In rows above the tile: a segment starts up to kAlign - 1 rows early.
  static constexpr int kHaloRows = kSkewRows ? kAlign : 0;
  static constexpr int kInRows = kR + kHaloRows;       // rows of `in` in the tile
  static constexpr int kInPasses = kInRows / kWarps;   // loads per thread and tile
  static constexpr int kOutPasses = kC / kWarps;       // stores per thread and tile
  static constexpr int kFixPerRow = kVecIn - 1;        // floats past a row's last vector, at most
  static_assert((kVecOut == 2 || kVecOut == 4) && (kVecIn == 2 || kVecIn == 4),
                "one float2 or float4 per lane and access: 64- or 128-float row pieces");
  static_assert(kAlign % kSector == 0 && kAlign <= 32, "whole sectors, at most 32 warps");
  static_assert(kR % kAlign == 0, "an out segment is a whole number of alignment units");
  static_assert(kInRows % kWarps == 0 && kC % kWarps == 0, "every warp moves the same number of rows");
  static_assert(kInRows % kVecOut == 0, "whole slot blocks on the row axis");
  static_assert(kWarps % kVecIn == 0, "rows kWarps apart share a vector skew");
  static_assert(kInPasses * kFixPerRow <= 32, "one fix-up load per warp covers all its rows");
};

// What a thread needs to know about its rows, the same for every tile of its block's strip.
//  - in side: the warp's rows start a floats past a vector boundary and are read from there, so
//    lane q's vector holds columns kVecIn q - a + j (j < kVecIn). Column slot col_slot[j] is where
//    element j goes; for lane 0 and j < a (a column of the tile to the left) it is the slot of
//    column kC - a + j, which the fix-up fills afterwards: lane q < kInPasses * kFixPerRow loads
//    column fix_col = kC - a + q % kFixPerRow of the warp's row pass fix_pass = q / kFixPerRow,
//    if that column is in the tile (fix_col < kC, i.e. q % kFixPerRow < a).
//  - out side: the warp's out rows start ph floats past a kAlign boundary (0 without the halo);
//    lane q writes floats kVecOut q + j of each segment, from slot row out_slot[j].
template <int kR, int kC, bool kSkewRows, int kAlign>
struct Lanes {
  using G = Geometry<kR, kC, kSkewRows, kAlign>;
  int a, ph, col_slot[G::kVecIn], fix_pass, fix_col, out_slot[G::kVecOut];

  __device__ __forceinline__ Lanes(int a_, int ph_) : a(a_), ph(ph_) {
    const int lane = threadIdx.x;
#pragma unroll
    for (int j = 0; j < G::kVecIn; ++j) {
      const int d = j - a;  // > -kVecIn: the lane before's vector (lane 31's, for lane 0) at worst
      col_slot[j] = (d & (G::kVecIn - 1)) * 32 + ((lane + (d >> (G::kVecIn / 2))) & 31);
    }
    fix_pass = lane / G::kFixPerRow;
    fix_col = kC - a + lane % G::kFixPerRow;
#pragma unroll
    for (int j = 0; j < G::kVecOut; ++j)
      out_slot[j] = slot<G::kInRows, G::kVecOut>(G::kHaloRows - ph + G::kVecOut * lane + j);
  }
  __device__ __forceinline__ bool fixes() const { return fix_pass < G::kInPasses && fix_col < kC; }
};

// The rows and columns of one tile that exist, relative to its first row r0 and column c0:
// row_lo <= rr < row_hi (halo rows negative), cc < col_hi; all of them inside the matrix.
struct Extent {
  int row_lo, row_hi, col_hi;
  __device__ __forceinline__ bool row(int rr) const { return rr >= row_lo && rr < row_hi; }
  __device__ __forceinline__ bool col(int cc) const { return cc >= 0 && cc < col_hi; }
};

// The loads of one tile into v (rows w, w + 8, ... of the tile, halo first) and fix, all issued
// before any use. kChecked: a tile at an edge of the matrix (or of the allocation): a vector that
// holds a wanted column and lies in the allocation moves whole, else its wanted floats one by one.
// skip_first: pass 0 (the halo) is already in v[0], carried from the tile above.
template <int kR, int kC, bool kSkewRows, int kAlign, bool kStream, bool kChecked>
__device__ __forceinline__ void load_tile(const float* __restrict__ in, int64_t rows, int64_t cols,
                                          int64_t r0, int64_t c0,
                                          const Lanes<kR, kC, kSkewRows, kAlign>& l, const Extent& e,
                                          bool skip_first,
                                          float (&v)[Geometry<kR, kC, kSkewRows, kAlign>::kInPasses]
                                                    [kC / 32],
                                          float& fix) {
  using G = Geometry<kR, kC, kSkewRows, kAlign>;
  constexpr int kVec = G::kVecIn;
  const int lane = threadIdx.x, w = threadIdx.y;
  const int64_t first = (r0 - G::kHaloRows + w) * cols + c0;  // element (this warp's first row, c0)
  const int cq = kVec * lane - l.a;                            // this lane's first column
#pragma unroll
  for (int p = 0; p < G::kInPasses; ++p) {
    if (p == 0 && skip_first) continue;
    const int64_t idx = first + p * G::kWarps * cols + cq;
    if (!kChecked) {
      load_vec<kVec, kStream>(in + idx, v[p]);
    } else if (e.row(w + p * G::kWarps - G::kHaloRows)) {
      bool any = false;
#pragma unroll
      for (int j = 0; j < kVec; ++j) any = any || e.col(cq + j);
      if (any && idx >= 0 && idx + kVec <= rows * cols) {
        load_vec<kVec, kStream>(in + idx, v[p]);
      } else {
#pragma unroll
        for (int j = 0; j < kVec; ++j) v[p][j] = e.col(cq + j) ? load_one<kStream>(in + idx + j) : 0.f;
      }
    }
  }
  if (l.fixes() &&
      (!kChecked || (e.row(w + l.fix_pass * G::kWarps - G::kHaloRows) && e.col(l.fix_col))))
    fix = load_one<kStream>(in + first + l.fix_pass * G::kWarps * cols + l.fix_col);
}

// v and fix into the tile: a warp's stores go to one slot row, 32 consecutive column slots. Inside
// the matrix every lane stores every element, lane 0's first a ones into the slots of the last a
// columns; after __syncwarp the fix-up lanes store the right floats there.
template <int kR, int kC, bool kSkewRows, int kAlign, bool kChecked>
__device__ __forceinline__ void fill_tile(float (*tile)[kC + 1],
                                          const Lanes<kR, kC, kSkewRows, kAlign>& l, const Extent& e,
                                          const float (&v)[Geometry<kR, kC, kSkewRows, kAlign>::kInPasses]
                                                          [kC / 32],
                                          float fix) {
  using G = Geometry<kR, kC, kSkewRows, kAlign>;
  constexpr int kVec = G::kVecIn;
  const int lane = threadIdx.x, w = threadIdx.y;
  const int cq = kVec * lane - l.a;
#pragma unroll
  for (int p = 0; p < G::kInPasses; ++p) {
    if (kChecked && !e.row(w + p * G::kWarps - G::kHaloRows)) continue;
    float* row = tile[slot<G::kInRows, G::kVecOut>(w + p * G::kWarps)];
#pragma unroll
    for (int j = 0; j < kVec; ++j)
      if (!kChecked || e.col(cq + j)) row[l.col_slot[j]] = v[p][j];
  }
  __syncwarp();
  if (l.fixes() &&
      (!kChecked || (e.row(w + l.fix_pass * G::kWarps - G::kHaloRows) && e.col(l.fix_col))))
    tile[slot<G::kInRows, G::kVecOut>(w + l.fix_pass * G::kWarps)][slot<kC, kVec>(l.fix_col)] = fix;
}

// The tile out again: warp w writes rows c0 + w, c0 + w + kWarps, ... of `out`, from ph rows before
// r0 (a kAlign boundary): one slot column and 32 consecutive slot rows per shared load.
template <int kR, int kC, bool kSkewRows, int kAlign, bool kChecked>
__device__ __forceinline__ void drain_tile(const float (*tile)[kC + 1], float* __restrict__ out,
                                           int64_t rows, int64_t r0, int64_t c0,
                                           const Lanes<kR, kC, kSkewRows, kAlign>& l, const Extent& e) {
  using G = Geometry<kR, kC, kSkewRows, kAlign>;
  constexpr int kVec = G::kVecOut;
  const int lane = threadIdx.x, w = threadIdx.y;
  const int rr = kVec * lane - l.ph;  // this lane's first row, relative to r0
  const int64_t first = (c0 + w) * rows + r0 + rr;
  bool own[kVec], all = true;
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    own[j] = !kChecked || e.row(rr + j);
    all = all && own[j];
  }
#pragma unroll
  for (int p = 0; p < G::kOutPasses; ++p) {
    if (kChecked && !e.col(w + p * G::kWarps)) continue;
    const int col = slot<kC, G::kVecIn>(w + p * G::kWarps);
    float x[kVec];
#pragma unroll
    for (int j = 0; j < kVec; ++j) x[j] = own[j] ? tile[l.out_slot[j]][col] : 0.f;
    float* dst = out + first + p * G::kWarps * rows;
    if (!kChecked || all) {
      store_vec<kVec>(dst, x);
    } else {
#pragma unroll
      for (int j = 0; j < kVec; ++j)
        if (own[j]) __stcs(dst + j, x[j]);
    }
  }
}

// Block (s, j) moves tiles k = s * tiles_per_block ... of tile column j, top to bottom. Blocks
// are placed on tiles by tile_grid's 2-D grid (group 0), or in groups of `group` tile columns by a
// 1-D grid of one tile per block (grouped_tile; step 08).
template <int kR, int kC, bool kSkewRows, int kAlign, bool kStream, int kMinBlocks>
__global__ void __launch_bounds__(32 * kAlign, min_blocks_for_target(kMinBlocks, 32 * kAlign))
transpose_sector_aligned(const float* __restrict__ in, float* __restrict__ out, int64_t rows,
                         int64_t cols, int tiles_per_block, bool rows_on_x, unsigned group) {
  using G = Geometry<kR, kC, kSkewRows, kAlign>;
  // Rows of kC + 1 words: consecutive slot rows start in consecutive banks.
  __shared__ float tile[G::kInRows][kC + 1];
  const int64_t tiles = (rows + (kSkewRows ? kAlign - 1 : 0) + kR - 1) / kR;  // tile rows
  const BlockTile t = group == 0 ? block_tile(rows_on_x)
                                 : grouped_tile(group, static_cast<unsigned>(tiles),
                                                static_cast<unsigned>((cols + kC - 1) / kC));
  const int w = threadIdx.y;
  const int64_t c0 = t.col * kC;
  const int64_t k_first = t.row * tiles_per_block;
  const int64_t k_end = tiles - k_first < tiles_per_block ? tiles : k_first + tiles_per_block;
  // The skews are the same for every tile of the strip: tiles are kR rows apart, a whole number
  // of kAlign units on both sides.
  const Lanes<kR, kC, kSkewRows, kAlign> l(
      floats_past<G::kVecIn>(in, (k_first * kR - G::kHaloRows + w) * cols + c0),
      kSkewRows ? floats_past<kAlign>(out, (c0 + w) * rows + k_first * kR) : 0);
  const int col_hi = static_cast<int>(cols - c0 < kC ? cols - c0 : kC);
  const bool in_aligned = reinterpret_cast<uintptr_t>(in) % (G::kVecIn * sizeof(float)) == 0;

  float v[G::kInPasses][G::kVecIn];
  float fix = 0.f;
  for (int64_t k = k_first; k < k_end; ++k) {
    const int64_t r0 = k * kR, top = r0 - G::kHaloRows;
    const Extent e{static_cast<int>(r0 < G::kHaloRows ? -r0 : -G::kHaloRows),
                   static_cast<int>(rows - r0 < kR ? rows - r0 : kR), col_hi};
    // Inside the matrix: every row (halo included) and column exists, and no vector read starts
    // before the start of `in`.
    const bool interior = top >= 0 && r0 + kR <= rows && c0 + kC <= cols &&
                          (top * cols + c0 >= G::kVecIn - 1 || in_aligned);
    // The halo of every tile but the strip's first: the tile above's last pass, still in registers.
    const bool carried = G::kHaloRows > 0 && k > k_first;
    if (carried) {
#pragma unroll
      for (int j = 0; j < G::kVecIn; ++j) v[0][j] = v[G::kInPasses - 1][j];
    }
    if (interior)
      load_tile<kR, kC, kSkewRows, kAlign, kStream, false>(in, rows, cols, r0, c0, l, e, carried, v,
                                                           fix);
    else
      load_tile<kR, kC, kSkewRows, kAlign, kStream, true>(in, rows, cols, r0, c0, l, e, carried, v,
                                                          fix);
    if (k > k_first) __syncthreads();  // the tile above has left `tile`
    if (interior)
      fill_tile<kR, kC, kSkewRows, kAlign, false>(tile, l, e, v, fix);
    else
      fill_tile<kR, kC, kSkewRows, kAlign, true>(tile, l, e, v, fix);
    __syncthreads();
    if (interior)
      drain_tile<kR, kC, kSkewRows, kAlign, false>(tile, out, rows, r0, c0, l, e);
    else
      drain_tile<kR, kC, kSkewRows, kAlign, true>(tile, out, rows, r0, c0, l, e);
  }
}

// Variant: tiles of kR x kC, kTilesPerBlock tiles down a column per block, out segments aligned to
// kAlign floats (kAlign warps per block), loads evict-first or not.
template <int kR, int kC, int kTilesPerBlock, bool kStream, int kAlign = kSector,
          int kMinBlocks = kMinBlocksPerSm<kR, kC, kAlign>>
void launch(const ladder::DeviceInfo&, const float* in, float* out, int64_t rows, int64_t cols,
            cudaStream_t stream) {
  // Every out row starts on a kAlign boundary when rows is a multiple of kAlign and `out` is aligned
  // to it (cudaMalloc's are, to 256 bytes): then no segment starts early and the halo is not needed.
  const bool skew =
      rows % kAlign != 0 || !ladder::aligned_to(out, kAlign * sizeof(float));
  const dim3 block(32, kAlign);
  // Segments that start up to kAlign - 1 rows early need as many more rows' worth of tile rows at
  // the bottom; one block per kTilesPerBlock tile rows.
  const TileGrid g = tile_grid(rows + (skew ? kAlign - 1 : 0), cols, kR * kTilesPerBlock, kC);
  if (skew)
    transpose_sector_aligned<kR, kC, true, kAlign, kStream, kMinBlocks>
        <<<g.grid, block, 0, stream>>>(in, out, rows, cols, kTilesPerBlock, g.rows_on_x, 0);
  else
    transpose_sector_aligned<kR, kC, false, kAlign, kStream, kMinBlocks>
        <<<g.grid, block, 0, stream>>>(in, out, rows, cols, kTilesPerBlock, g.rows_on_x, 0);
  CUDA_CHECK_LAUNCH();
}

// The run-time candidates (--variant NAME), the default first. ROWSxCOLS: the tile; _aN: out
// segments aligned to N floats (16: 64 bytes, 32: 128 bytes) with N warps per block, else to
// 32-byte sectors with 8; _sN: N tiles per block down a column (the halo read once per N tiles);
// _cs: evict-first loads; _b5: 5 blocks per SM instead of 6 (48 registers, no spills).
const std::vector<Variant> kVariants{
    {"64x128_a16", launch<64, 128, 1, false, 16>,
     "32 x 16 threads, 64 x 128 tile (+16-row halo), float4 loads, float2 stores of segments "
     "skewed to 64-byte boundaries, de-interleaved tile[80][129]"},
    {"64x64_a16", launch<64, 64, 1, false, 16>,
     "32 x 16 threads, 64 x 64 tile (+16-row halo), float2 row pieces skewed to 64-byte boundaries, "
     "de-interleaved tile[80][65]"},
    {"128x64_a16", launch<128, 64, 1, false, 16>,
     "32 x 16 threads, 128 x 64 tile (+16-row halo), float2 loads, float4 stores of segments "
     "skewed to 64-byte boundaries, de-interleaved tile[144][65]"},
    {"64x64_a32", launch<64, 64, 1, false, 32>,
     "32 x 32 threads, 64 x 64 tile (+32-row halo), float2 row pieces skewed to 128-byte lines, "
     "de-interleaved tile[96][65]"},
    {"64x64", launch<64, 64, 1, false>,
     "32 x 8 threads, 64 x 64 tile (+8-row halo), float2 row pieces skewed to 32-byte sectors, "
     "de-interleaved tile[72][65]"},
    {"64x64_b5", launch<64, 64, 1, false, kSector, 5>,
     "32 x 8 threads, 64 x 64 tile (+8-row halo), float2 row pieces skewed to 32-byte sectors, "
     "de-interleaved tile[72][65], 5 blocks per SM: 48 registers, no spills"},
    {"64x64_s2", launch<64, 64, 2, false>,
     "32 x 8 threads, 64 x 64 tiles (+8-row halo), 2 per block down a column, float2 row pieces "
     "skewed to 32-byte sectors, de-interleaved tile[72][65]"},
    {"64x64_s4", launch<64, 64, 4, false>,
     "32 x 8 threads, 64 x 64 tiles (+8-row halo), 4 per block down a column, float2 row pieces "
     "skewed to 32-byte sectors, de-interleaved tile[72][65]"},
    {"64x64_s4_cs", launch<64, 64, 4, true>,
     "32 x 8 threads, 64 x 64 tiles (+8-row halo), 4 per block down a column, float2 row pieces "
     "skewed to 32-byte sectors, evict-first loads, de-interleaved tile[72][65]"},
    {"128x64", launch<128, 64, 1, false>,
     "32 x 8 threads, 128 x 64 tile (+8-row halo), float2 loads, float4 stores of segments skewed "
     "to 32-byte sectors, de-interleaved tile[136][65]"},
    {"64x128", launch<64, 128, 1, false>,
     "32 x 8 threads, 64 x 128 tile (+8-row halo), float4 loads, float2 stores of segments skewed "
     "to 32-byte sectors, de-interleaved tile[72][129]"},
    {"64x128_s2", launch<64, 128, 2, false>,
     "32 x 8 threads, 64 x 128 tiles (+8-row halo), 2 per block down a column, float4 loads, "
     "float2 stores of segments skewed to 32-byte sectors, de-interleaved tile[72][129]"},
};

// The default for this GPU: the first of 64x128_a16, 64x64_a16 and 64x64 (in the order they
// measured on the H100: appendix.md, "Variants (--variant)") of which two blocks fit on one SM.
// Two, because a block has no load in flight while it waits at its barrier and while it stores:
// with one block per SM the SM's share of the memory system idles for that time (64x64_a32, one
// block of 1,024 threads per SM, ran at 55-61% of the ceiling). blocks_per_sm() asks the occupancy
// calculator (registers, shared memory, threads and blocks per SM), under LADDER_DEVICE_PROFILE
// with that GPU's limits. 64x128_a16 needs 40.3 KiB (41,280 bytes) and 512 threads a block: two fit
// an H100, an A100 or an RTX 3060 (100 KiB and 1,536 threads per SM), one a T4 (64 KiB), which
// takes 64x64_a16 (20.3 KiB).
template <int kR, int kC, int kAlign>
int resident_blocks(const ladder::DeviceInfo& dev) {
  const void* kernel = reinterpret_cast<const void*>(
      &transpose_sector_aligned<kR, kC, true, kAlign, false, kMinBlocksPerSm<kR, kC, kAlign>>);
  return ladder::blocks_per_sm(dev, kernel, 32 * kAlign, 0);
}

template <int kR, int kC, int kAlign>
constexpr size_t kTileBytes = sizeof(float) * Geometry<kR, kC, true, kAlign>::kInRows * (kC + 1);

Choice choose(const ladder::DeviceInfo& dev) {
  struct Candidate {
    const char* name;
    int threads;
    size_t smem;
    int blocks;
  };
  const Candidate candidates[] = {
      {"64x128_a16", 32 * 16, kTileBytes<64, 128, 16>, resident_blocks<64, 128, 16>(dev)},
      {"64x64_a16", 32 * 16, kTileBytes<64, 64, 16>, resident_blocks<64, 64, 16>(dev)},
      {"64x64", 32 * kSector, kTileBytes<64, 64, kSector>, resident_blocks<64, 64, kSector>(dev)},
  };
  auto kb = [](size_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f KiB", bytes / 1024.0);
    return std::string(text);
  };
  const std::string limits = "this GPU: " + std::to_string(dev.max_threads_per_sm) + " threads and " +
                             kb(dev.smem_per_sm) + " of shared memory per SM";
  auto blocks = [](int n) { return std::to_string(n) + (n == 1 ? " block" : " blocks"); };
  std::string passed;  // "64x128_a16: 1 block; " for each candidate before the choice
  const Candidate* best = &candidates[0];
  for (const Candidate& c : candidates) {
    if (c.blocks >= 2)
      return {c.name, blocks(c.blocks) + " of " + std::to_string(c.threads) + " threads and " +
                          kb(c.smem) + " fit per SM, the first candidate with two (" + passed + limits +
                          ")"};
    passed += std::string(c.name) + ": " + blocks(c.blocks) + "; ";
    if (c.blocks > best->blocks) best = &c;
  }
  return {best->name, "no candidate fits two blocks per SM, this one the most (" + passed + limits + ")"};
}

const Step kStep{"transpose/07_sector_aligned", kVariants.front().launch, kVariants.front().shape,
                 Output::transposed, kVariants, choose};
LADDER_STEP(kStep);

}  // namespace transpose::sector_aligned
