// separable_conv: a separable 2-D convolution of a float image — a row pass, then a column pass —
// with zero-padded borders and an output the size of the input (the post "separable convolution
// with CUDA", the follow-up to an SSE/AVX post; docs/ladders.md).
//
//   in, out   height x width, row-major: pixel (y, x) at [y * width + x]; any width x height
//   taps      K row taps and K column taps, K odd, 1 <= K <= kMaxTaps; R = (K - 1) / 2
//   row pass  tmp[y][x] = sum_{i<K} row_taps[i] * in[y][x + i - R]      (in = 0 outside the image)
//   col pass  out[y][x] = sum_{j<K} col_taps[j] * tmp[y + j - R][x]     (tmp = 0 outside the image)
//
// Taps are applied as the post writes them (correlation: tap 0 meets the leftmost/topmost pixel).
// Flags --width --height --taps (default 8192 x 8192, 17 taps: 256 MiB per image, 5x the H100's
// L2). What every step of this folder shares lives here and in separable_conv.cu: the inputs
// (seeded; image and taps uniform in [-1, 1)), the fp64 reference with the magnitudes that bound
// float rounding, the check, the bytes the problem must move and the ceiling (the single-pass floor:
// 8 bytes per pixel over the copy ceiling of common/, measured in the same process).
#pragma once

#include "common/check.h"
#include "common/device.h"
#include "common/step.h"
#include "common/verify.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace separable_conv {

constexpr int64_t kDefaultWidth = 8192;
constexpr int64_t kDefaultHeight = 8192;
constexpr int64_t kDefaultTaps = 17;
// Every step takes every odd K up to here. 127 keeps the largest tile of every step inside the
// H100's 227 KB of shared memory per block (at K = 127 step 09's 64-row tile needs 197 KB, step
// 10's largest 198 KB).
constexpr int kMaxTaps = 127;
static_assert(kMaxTaps % 2 == 1, "the largest K is odd");

// What one run works on. GPU steps get device pointers and a stream; the CPU step gets host
// pointers and no stream.
struct Args {
  const ladder::DeviceInfo* dev;
  const float* in;        // height x width
  float* tmp;             // height x width: the row pass's result (nullptr for a one-pass step)
  float* out;             // height x width
  const float* row_taps;  // taps floats
  const float* col_taps;  // taps floats
  int64_t width, height;
  int taps;
  std::string tile;       // --tile NAME of a tunable step, or "auto": the step picks for this GPU
  cudaStream_t stream;
  // Where a step says what it chose for this device and problem (the tile, the kernel) and why:
  // the record's "choice" (common/report.h). The step writes it on every launch (the same words).
  std::string* choice = nullptr;
};

using LaunchFn = void (*)(const Args& a);
// A step that keeps its taps somewhere of its own (__constant__ memory) copies them there from
// a.row_taps / a.col_taps (device memory) on a.stream. The harness calls it once after uploading
// the taps, outside the timed region — and inside the end-to-end region, which uploads them again.
using LoadTapsFn = void (*)(const Args& a);

enum class Runs { on_gpu, on_cpu };
// The steps that own their host<->device transfers (01, 02) and what their host buffers are.
enum class Transfers { none, pageable, pinned };

// A step, declared in its file as an aggregate, e.g.
//   const Step kStep{"separable_conv/02_pinned", launch, "32 x 32 threads ...", nullptr, Transfers::pinned};
//   const Step kStep{"separable_conv/03_constant_taps", launch, "...", load_taps};
//   const Step kStep{"separable_conv/09_fused", launch, "...", nullptr, Transfers::none, kTiles, false};
struct Step {
  const char* id;
  LaunchFn launch;                       // both passes (or the one fused pass), or the CPU loops
  const char* shape = "";                // one line for the report: block, tile, outputs per thread
  LoadTapsFn load_taps = nullptr;
  Transfers transfers = Transfers::none;
  // Tunable steps: the --tile names they know, space-separated ("" = no --tile). Without --tile
  // (or with --tile auto) the step picks one for the GPU by a rule of its own and says which in
  // Args::choice; the list is in the order of that rule's ties (today's H100 default first).
  const char* tiles = "";
  bool intermediate = true;              // false: one pass, no tmp image
  Runs runs = Runs::on_gpu;
};

// The folder's main: flags, inputs, reference, checks, timing, ceiling, report.
int run(const Step& step, int argc, char** argv);

// The reference, in fp64: the row pass and the column pass of the definition above, and beside
// each output the magnitude sum_j |col_taps[j]| * sum_i |row_taps[i]| * |in[..]| of its K x K
// terms, which bounds float rounding (error_bound). OpenMP over rows; deliberately not the code of
// any step. ref and magnitude hold width * height doubles.
void reference_convolution(const float* in, const float* row_taps, const float* col_taps,
                           int64_t width, int64_t height, int taps, double* ref, double* magnitude);

// The rounding bound of every step: |got - ref| <= c * K * u * magnitude. An output is two float
// dot products of K terms each, one feeding the other. The row pass gives t = sum_i row_taps[i] *
// in[..] with |t - t_exact| <= g * sum_i |row_taps[i] * in[..]|, g = K u / (1 - K u), u = 2^-24,
// for any summation order, with or without FMA (products rounded or not; zero taps add exact
// zeros). The column pass adds g * sum_j |col_taps[j]| |t_j| with |t_j| <= (1 + g) * (row
// magnitude), and carries the row errors through: |out - out_exact| <= (2g + g^2) * magnitude.
// For K <= 127, K u <= 7.6e-6, so 2g + g^2 <= 2.00003 K u; c = 2.001 covers that and the fp64
// reference's own error (about 2 K 2^-53 * magnitude). No step may do worse than recursive
// summation of each pass in float, so no step gets a looser bound.
inline ladder::ErrorBound error_bound(int taps) {
  return ladder::ErrorBound{static_cast<double>(taps), ladder::kFloatEps, 2.001};
}

// Bytes the problem must move: every input pixel read once, every output pixel written once.
inline double min_bytes(int64_t width, int64_t height) {
  return 8.0 * static_cast<double>(width) * static_cast<double>(height);
}

// ---- Shared by the GPU steps ---------------------------------------------------------------------

constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The grid of a tiled pass: one block per tile_w-wide column of tiles on x, and on y as many tile
// rows as gridDim.y allows (65,535). Kernels walk the tile rows with a grid-stride loop (the
// post's `j += blockDim.y * gridDim.y`), so an image of any height works; width / tile_w always
// fits gridDim.x (2^31 - 1) for an image that fits in memory.
inline dim3 tile_grid(int64_t width, int64_t height, int tile_w, int tile_h) {
  const int64_t tiles_x = ceil_div(width, tile_w), tiles_y = ceil_div(height, tile_h);
  if (tiles_x > 2147483647)
    throw ladder::UsageError("an image " + std::to_string(width) + " pixels wide needs more than 2^31 - 1 blocks");
  return dim3(static_cast<unsigned>(tiles_x), static_cast<unsigned>(std::min<int64_t>(tiles_y, 65535)));
}

// ---- Shared by the tunable steps (08, 09, 10): the default tile, a rule from the device -----------

// One --tile candidate as this launch would run it: its kernel (the one whose occupancy decides),
// threads per block and dynamic shared memory per block at this K.
struct Candidate {
  std::string name;
  const void* kernel;
  int threads;
  size_t smem;
};

// The tunable steps' rule (every GPU, read off the device, never an H100 constant): of the
// candidates whose block fits this GPU (smem <= dev.smem_per_block_optin, and at least one block per
// SM by ladder::blocks_per_sm), the one with the most resident warps per SM; ties go to the one
// listed first. *why gets "NAME: N warps per SM (B blocks x W warps, S B of shared memory each),
// the most of the C that fit". None fits: UsageError (exit 2) naming the bytes the smallest
// candidate needs and what the GPU allows. Opts each candidate into its shared memory
// (ladder::require_shared_memory) before asking for its occupancy.
size_t pick_most_resident(const ladder::DeviceInfo& dev, const std::vector<Candidate>& candidates,
                          const std::string& what, std::string* why);

}  // namespace separable_conv
