// transpose: out = in^T for a float matrix (the post "CUDA编程入门", Matrix Transpose; docs/ladders.md).
//
// `in` is rows x cols, row-major; `out` is cols x rows, row-major: out[c][r] = in[r][c], i.e.
// out[c * rows + r] = in[r * cols + c]. Any rows x cols works, 1 x 1, 1 x n and n x 1 included.
//
// What every step of this folder shares: the --rows/--cols flags (default 8192 x 8192, 256 MiB per
// matrix, 5x the H100's L2), the input (seeded, uniform in [-1, 1)), the CPU reference (cache-blocked,
// OpenMP), the exact check (a transpose moves bits, so the GPU must match bit for bit), the bytes the
// problem must move (every element read once and written once) and the ceiling (the copy ceiling of
// common/, measured in the same process). A step supplies only a launcher.
#pragma once

#include "common/buffers.h"
#include "common/check.h"
#include "common/device.h"
#include "common/step.h"
#include "common/tile_order.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace transpose {

constexpr int64_t kDefaultRows = 8192;
constexpr int64_t kDefaultCols = 8192;

// Enqueue out = in^T on `stream`; in is rows x cols, out is cols x rows, both row-major.
using LaunchFn = void (*)(const ladder::DeviceInfo& dev, const float* in, float* out, int64_t rows,
                          int64_t cols, cudaStream_t stream);

// What a step's output is checked against. Only the ceiling step (00_copy) copies.
enum class Output { transposed, copied };

// One run-time candidate of a tunable step: --variant NAME runs `launch` and reports `shape`.
struct Variant {
  const char* name;
  LaunchFn launch;
  const char* shape;
};

// What a tunable step runs when no --variant names one: the name of one of its variants, chosen
// from the device (shared memory, threads and blocks per SM; never the H100's numbers), and why in
// a few words. The harness reports "NAME: WHY" as the record's `choice`.
struct Choice {
  const char* name;
  std::string why;
};
using ChooseFn = Choice (*)(const ladder::DeviceInfo& dev);

// The variant called `name`, or null: the harness's lookup for --variant and a rule's choice, and
// step 09's for step 08's default.
const Variant* find_variant(const std::vector<Variant>& variants, const std::string& name);

struct Step {
  const char* id = nullptr;          // "transpose/03_shared_tiled"
  LaunchFn launch = nullptr;
  const char* shape = "";            // one line for the report: block, tile, elements per thread
  Output output = Output::transposed;
  // A tunable step's candidates: such a step takes --variant NAME (tuning sweeps); the others do
  // not know the flag. Without --variant (or with --variant auto) it runs the one `choose` picks
  // for the device, or the first where it has no rule.
  std::vector<Variant> variants = {};
  ChooseFn choose = nullptr;
};

// The folder's main: flags, input, reference, check, timing, ceiling, report.
int run(const Step& step, int argc, char** argv);

// The reference: a cache-blocked loop, 64 x 64 blocks, OpenMP over blocks. out must not alias in.
void reference_transpose(const float* in, float* out, int64_t rows, int64_t cols);

// Bytes the problem must move: each element read once and written once.
inline double min_bytes(int64_t rows, int64_t cols) {
  return 8.0 * static_cast<double>(rows) * static_cast<double>(cols);
}

// ---- The grid of tiles, shared by every GPU step ----------------------------------------------
//
// Each block moves one tile of tile_rows x tile_cols input elements. Tile columns go on blockIdx.x
// and tile rows on blockIdx.y, which stops at 65,535: a matrix more than 65,535 tiles tall (n x 1
// with n > 2M at 32-row tiles) puts tile rows on x instead (up to 2^31 - 1) and says so in
// `rows_on_x`. Both counts cannot exceed 65,535 at once: that many tiles do not fit in any GPU.
struct TileGrid {
  dim3 grid;
  bool rows_on_x = false;
};

inline TileGrid tile_grid(int64_t rows, int64_t cols, int tile_rows, int tile_cols) {
  constexpr int64_t kMaxY = 65535, kMaxX = 2147483647;
  const int64_t tr = (rows + tile_rows - 1) / tile_rows, tc = (cols + tile_cols - 1) / tile_cols;
  if (tr <= kMaxY && tc <= kMaxX)
    return {dim3(static_cast<unsigned>(tc), static_cast<unsigned>(tr)), false};
  if (tc <= kMaxY && tr <= kMaxX)
    return {dim3(static_cast<unsigned>(tr), static_cast<unsigned>(tc)), true};
  throw ladder::UsageError("a " + std::to_string(rows) + " x " + std::to_string(cols) +
                           " matrix needs more tiles than a grid holds");
}

#ifdef __CUDACC__
// Which tile this block moves, counted in tiles.
struct BlockTile {
  int64_t row, col;
};
__device__ __forceinline__ BlockTile block_tile(bool rows_on_x) {
  return rows_on_x ? BlockTile{blockIdx.x, blockIdx.y} : BlockTile{blockIdx.y, blockIdx.x};
}

// Which tile this block moves in a 1-D grid of tile_rows x tile_cols blocks that walks the tiles
// `group` tile columns at a time (common/tile_order.h, lines = tile columns): in launch order the
// first group x tile_rows blocks take tile columns 0 ... group - 1, a row of `group` tiles after
// another, top to bottom; the next as many the next `group` columns (the last group may be
// narrower). group >= tile_cols is tile_grid's order (columns fastest), group 1 walks down one tile
// column after another. The grid holds tile_rows x tile_cols < 2^32 blocks (the launcher checks).
__device__ __forceinline__ BlockTile grouped_tile(unsigned group, unsigned tile_rows, unsigned tile_cols) {
  const ladder::GroupedTile<unsigned> t = ladder::grouped_tile<unsigned>(blockIdx.x, group, tile_cols, tile_rows);
  return {t.along, t.line};
}

// kVec consecutive floats (1, 2 or 4, at an address that is a multiple of kVec floats) as one
// access, for steps 06-09; load_one is a single float, for the edge columns a vector would pass.
// Loads keep L2's default policy (__ldg) or, with kStream, mark their lines evict-first (__ldcs);
// stores are always evict-first (__stcs): every byte of `out` is written once and never read again,
// so it should not push `in` out of L2. The intrinsics also keep a float4 store whole: written as
// *reinterpret_cast<float4*>(p) = ..., nvcc 13.0 split step 06's stores into four 4-byte ones.
template <bool kStream>
__device__ __forceinline__ float load_one(const float* p) { return kStream ? __ldcs(p) : __ldg(p); }
template <int kVec, bool kStream>
__device__ __forceinline__ void load_vec(const float* p, float (&e)[kVec]) {
  static_assert(kVec == 1 || kVec == 2 || kVec == 4, "a float, float2 or float4");
  if constexpr (kVec == 4) {
    const auto* q = reinterpret_cast<const float4*>(p);
    const float4 v = kStream ? __ldcs(q) : __ldg(q);
    e[0] = v.x; e[1] = v.y; e[2] = v.z; e[3] = v.w;
  } else if constexpr (kVec == 2) {
    const auto* q = reinterpret_cast<const float2*>(p);
    const float2 v = kStream ? __ldcs(q) : __ldg(q);
    e[0] = v.x; e[1] = v.y;
  } else {
    e[0] = load_one<kStream>(p);
  }
}
template <int kVec>
__device__ __forceinline__ void store_vec(float* p, const float (&e)[kVec]) {
  static_assert(kVec == 1 || kVec == 2 || kVec == 4, "a float, float2 or float4");
  if constexpr (kVec == 4) __stcs(reinterpret_cast<float4*>(p), make_float4(e[0], e[1], e[2], e[3]));
  else if constexpr (kVec == 2) __stcs(reinterpret_cast<float2*>(p), make_float2(e[0], e[1]));
  else __stcs(p, e[0]);
}
#endif

}  // namespace transpose
