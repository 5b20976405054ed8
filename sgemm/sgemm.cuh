// sgemm: C = A·B in fp32, row-major, any M, N, K (the post "CUDA编程入门", SGEMM sections), and the
// side ladder C = A·Aᵀ (the post "CUDA实践指南(十八)").
//
// INTERFACE (fixed: every step implements one of these). The rest of this header — sizes, flags,
// inputs, the references, the check, the ceiling — belongs to the folder's harness.
#pragma once

#include "common/check.h"
#include "common/device.h"
#include "common/step.h"
#include "common/tile_order.h"
#include "common/verify.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sgemm {

// One C = A·B on the device: A is m x k, B is k x n, C is m x n, all row-major and densely packed
// (row pitches k, n, n), from cudaMalloc (256-byte aligned base pointers).
struct Gemm {
  const float* A;
  const float* B;
  float* C;
  int64_t m, n, k;
  cudaStream_t stream;
  const ladder::DeviceInfo* dev;
  std::string tile;  // --tile NAME: a tunable step's candidate to use; "" = its default for this GPU
  // Device scratch of Step::workspace_bytes(*this) bytes, 256-byte aligned, allocated by the harness
  // before the first run (null and 0 for steps without one).
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

// One C = A·Aᵀ (the aat side ladder): A is m x k, C is m x m, row-major, densely packed.
struct Aat {
  const float* A;
  float* C;
  int64_t m, k;
  cudaStream_t stream;
  const ladder::DeviceInfo* dev;
};

// The arithmetic a step does, which decides its reference bound and its ceiling: fp32 (the main
// and aat ladders: FFMA, checked with the fp32 bound against cuBLAS pedantic fp32) or tf32 (the tf32
// side ladder: tensor cores on inputs cut to TF32's 10-bit mantissa, checked with the TF32 bound,
// timed against cuBLAS with CUBLAS_COMPUTE_32F_FAST_TF32).
enum class Math { fp32, tf32 };

// How a tf32 step's inputs become TF32, which sets its bound's unit roundoff u_t: cut (the tensor
// cores read fp32 bits and ignore the low 13: |rel. error| < 2^-10; wgmma, mma.sync on raw bits,
// and cuBLAS, whose conversion is not documented) or rounded to nearest (cvt.rna.tf32.f32 or
// wmma::__float_to_tf32: |rel. error| <= 2^-11).
enum class Tf32Input { cut, rounded };

using LaunchFn = void (*)(const Gemm& g);
using AatLaunchFn = void (*)(const Aat& a);

// A step, declared in its file as an aggregate:
//   main ladder:  const Step kStep{"sgemm/05_2d_blocktiling", launch};
//   tunable:      const Step kStep{"sgemm/09_pipelined", launch, nullptr, /*tunable=*/true};
//   aat ladder:   const Step kStep{"sgemm/aat_02_coalesced", nullptr, launch_aat};
// Only a tunable step accepts --tile NAME (its launcher throws ladder::UsageError for a name it does
// not know, listing the names it knows); the harness rejects --tile for the others.
// workspace_bytes: the device scratch a step needs for a problem (called with the problem's Gemm,
// its pointers still null, before anything is allocated: the memory guard counts it). describe: what
// a step runs for a problem on this GPU and why (the tiling its default picks, the shape class),
// for the report's "choice" (common/report.h). require_size: a step with a size limit of its own
// (tf32_03/04: TMA's 32-bit coordinates) throws ladder::UsageError (exit 2) naming it, called with
// the problem before anything is allocated.
struct Step {
  const char* id;
  LaunchFn launch;
  AatLaunchFn aat = nullptr;
  bool tunable = false;
  size_t (*workspace_bytes)(const Gemm& g) = nullptr;
  std::string (*describe)(const Gemm& g) = nullptr;
  Math math = Math::fp32;  // tf32: the tf32 series (the TF32 bound and ceiling; describe -> "choice")
  void (*require_size)(const Gemm& g) = nullptr;
  Tf32Input tf32_input = Tf32Input::cut;  // tf32 steps: which u_t bounds them
};

}  // namespace sgemm

// ---- The rest of the folder's header: everything the steps and the harness share ----------------
//
// What every step of this folder shares: the flags (main: --m --n --k, default 4096^3, three 64 MiB
// matrices, 4x the H100's 50 MB L2 between them; aat: --m --k, default m = 8192, k = 32, the guide's
// w = TILE_DIM, where C = A·Aᵀ is 256 MiB and A only 1 MiB), the inputs (seeded, uniform in
// [-1, 1), or the post's analytic A[i][j] = i + j, B[i][j] = i - j), the references (cuBLAS fp32
// with pedantic math on the same inputs, checked itself against fp64 CPU rows and columns or the
// closed form), the check (the magnitude bound of common/verify.h, sum|terms| = (|A|·|B|)ij), the
// FLOPs and bytes, and the ceilings (cuBLAS GFLOP/s for the main ladder, the copy ceiling for aat).
// The harness is sgemm/sgemm.cu.

namespace sgemm {

constexpr int64_t kDefaultM = 4096, kDefaultN = 4096, kDefaultK = 4096;
constexpr int64_t kAatDefaultM = 8192, kAatDefaultK = 32;
// A C = A·B with m or n at most this is "skinny": a GEMV-like problem, bound by reading A or B once
// (step 11's class, and the harness's extra.pct_of_copy_bound).
constexpr int64_t kSkinny = 16;

// The folder's main: flags, inputs, references, checks, timing, ceiling, report.
int run(const Step& step, int argc, char** argv);

// C = A·B with cuBLAS fp32 (pedantic math, no TF32) on g.stream, through the harness's handle: step
// 00_cublas, the reference and the ceiling. Only valid while run() is running.
void cublas_sgemm(const Gemm& g);
// C = A·B with cuBLAS TF32 tensor ops (cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32) on g.stream:
// step tf32_00_cublas, the tf32 series' ceiling. Only valid while run() is running.
void cublas_sgemm_tf32(const Gemm& g);

// ---- The grid of output tiles ------------------------------------------------------------------
//
// Every GPU step gives each thread block one tile_m x tile_n tile of C. The grid is 1-D: blockIdx.x
// counts tiles row by row (column tiles fastest, the order a 2-D grid's blockIdx.x/.y would give),
// so no size hits gridDim.y's 65,535 limit (a 10^6 x 1 C has 125,000 tile rows of 8).
struct TileGrid {
  unsigned blocks;  // tiles in C: gridDim.x
  int64_t tiles_n;  // tiles across a row of C
};
// Throws UsageError when C needs more than 2^31 - 1 tiles (unreachable on today's memory sizes).
TileGrid tile_grid(int64_t m, int64_t n, int tile_m, int tile_n);

// The first row and column of C that a tile covers.
struct TileOrigin {
  int64_t row, col;
};

#ifdef __CUDACC__
// Tile number `tile`, numbered row by row.
__device__ __forceinline__ TileOrigin tile_origin_of(int64_t tile, int64_t tiles_n, int tile_m, int tile_n) {
  return {tile / tiles_n * tile_m, tile % tiles_n * tile_n};
}
// This block's tile, numbered row by row.
__device__ __forceinline__ TileOrigin tile_origin(int64_t tiles_n, int tile_m, int tile_n) {
  return tile_origin_of(blockIdx.x, tiles_n, tile_m, tile_n);
}
#endif

// Tile number `tile` (0 .. tiles_m x tiles_n - 1) in a grouped order (common/tile_order.h, lines =
// tile rows): bands of `group` tile rows, each band walked column by column (down the band's rows
// first). The tiles that run at one time then cover about group x (resident / group) tiles instead
// of a strip one or two tile rows high, so a k step of them reads fewer rows of A plus columns of B
// (all of B's columns, in a strip) and more of those reads hit L2. group = 1 is tile_origin's
// row-by-row order; the last band may have fewer rows.
__host__ __device__ inline TileOrigin grouped_tile_origin(int64_t tile, int64_t tiles_m, int64_t tiles_n,
                                                          int64_t group, int tile_m, int tile_n) {
  const ladder::GroupedTile<int64_t> t = ladder::grouped_tile<int64_t>(tile, group, tiles_m, tiles_n);
  return {t.line * tile_m, t.along * tile_n};
}

// The band height for grouped_tile_origin that makes the tiles resident at one time (`resident`:
// blocks per SM x SMs, for a persistent kernel) closest to a square of C: group tile rows of tile_m
// by resident / group tile columns of tile_n, group ~ sqrt(resident x tile_n / tile_m), at most the
// tile rows there are, at least 1.
int64_t square_band_rows(int64_t resident, int64_t tiles_m, int tile_m, int tile_n);

// How many equal k ranges to cut each unit of a partly empty last wave into (tf32_04's _tail): the
// number (1-4) that ends the launch soonest, counted in units' times — rest units cut in `parts`
// take ceil(rest * parts / workers) rounds of 1 / parts. 8192^3: 68 tiles left after 15 waves of
// 132; whole, a 16th wave; halves, 136 pieces, two rounds of a half (no sooner); thirds, 204
// pieces, two rounds of a third: 15 2/3 tiles' time. 4096^3 (3 waves and 116 tiles) ends after 4
// however cut, and stays whole. Only after a whole wave (fewer units than workers run one a
// block), with at least 8 k steps a piece, and with parts dividing the workers, so that the parts
// of a unit run in one round (the one that adds them up does not wait a round for the others).
int64_t tail_parts_of(int64_t units, int64_t workers, int64_t ktiles);

// ---- Tunable steps -------------------------------------------------------------------------------
//
// A tunable step names its candidate tilings; --tile NAME picks one, no --tile picks its default.
// pick_tile() throws UsageError for a name it does not know, listing the known ones after "known:"
// (the GPU tests read that list to run every candidate).
struct TileCandidate {
  const char* name;    // "64x128x8_8x4": BM x BN x BK _ TM x TN
  LaunchFn launch;
};
LaunchFn pick_tile(const char* step_id, const std::string& tile, const TileCandidate* candidates,
                   size_t count, const char* default_name);
// The same lookup in a step's own table of candidates (any struct with a `name`).
[[noreturn]] void throw_unknown_tile(const char* step_id, const std::string& want,
                                     const std::vector<const char*>& known);
template <class Candidate, size_t N>
const Candidate& pick_candidate(const char* step_id, const std::string& tile, const Candidate (&candidates)[N],
                                const char* default_name) {
  const std::string want = tile.empty() ? std::string(default_name) : tile;
  std::vector<const char*> known;
  for (const Candidate& c : candidates) {
    if (want == c.name) return c;
    known.push_back(c.name);
  }
  throw_unknown_tile(step_id, want, known);
}

// ---- Problem size, FLOPs, bytes ------------------------------------------------------------------

// 2 m n k for C = A·B; 2 m m k for C = A·Aᵀ.
double flops(int64_t m, int64_t n, int64_t k);
// The aat ladder's effective bandwidth: A read once (m x k) and C written once (m x m).
double aat_min_bytes(int64_t m, int64_t k);

// ---- References ----------------------------------------------------------------------------------

// The host side of one problem: C = A·B (A m x k, B k x n), or C = A·Aᵀ when B is null (n == m).
struct Operands {
  const float* A;
  const float* B;
  int64_t m, n, k;
};

// fp64 reference rows and columns of C, each element with its magnitude sum_p |a_ip| |b_pj|:
// row r of the list goes to ref[r * n + j], column c of the list to ref[c * m + i]. OpenMP.
void reference_rows(const Operands& op, const std::vector<int64_t>& rows, double* ref, double* mag);
void reference_cols(const Operands& op, const std::vector<int64_t>& cols, double* ref, double* mag);

// The post's analytic inputs: A[i][j] = i + j and B[i][j] = i - j. Every value is an exact float
// while it stays below 2^24, which analytic_fits() checks for the whole problem.
bool analytic_fits(int64_t m, int64_t n, int64_t k);
// The exact element and magnitude, from the closed forms (128-bit integers, then rounded once):
//   C[i][j]  = sum_{p<K} (i + p)(p - j) = K(K-1)(2K-1)/6 + (i - j) K(K-1)/2 - K i j
//   |terms|  = sum_{p<K} (i + p)|p - j| = C[i][j] - 2 F(min(j, K)),
//              F(J) = sum_{p<J} (i + p)(p - j) = (J-1)J(2J-1)/6 + (i - j) J(J-1)/2 - J i j  (<= 0)
// and for A·Aᵀ (A[i][p] = i + p, every term >= 0, so the magnitude is the value):
//   C[i][j]  = sum_{p<K} (i + p)(j + p) = K i j + (i + j) K(K-1)/2 + K(K-1)(2K-1)/6
struct Exact {
  double value, magnitude;
};
Exact analytic_gemm(int64_t i, int64_t j, int64_t k);
Exact analytic_aat(int64_t i, int64_t j, int64_t k);

// The rows or columns the CPU checks: `count` distinct random indices below extent - 1 (from the
// seed) and always the last one, extent - 1, which lies in the last (edge) tile. Sorted.
std::vector<int64_t> sample_indices(int64_t extent, int count, uint64_t seed, uint64_t stream);

// The error bounds (common/verify.h: |got - ref| <= c K eps sum|terms|, eps = 2^-24). Any fp32
// evaluation of a K-term dot product, in any order, with or without FMA, is within
// gamma_K sum|terms| of the exact value, gamma_K = K u / (1 - K u) (Higham, Accuracy and Stability
// of Numerical Algorithms, 3.1). Hence:
//  * against an exact (fp64 CPU or closed-form) reference: c = 1 / (1 - K u), plus 1% for the fp64
//    reference's own rounding (2^29 times smaller);
//  * against cuBLAS fp32: both sides are within gamma_K M of the exact value, so they may differ by
//    2 gamma_K M; and M itself comes from an fp32 GEMM on |A|, |B|, all terms positive, so the
//    computed M' >= (1 - gamma_K) M. c = 2 / ((1 - K u)(1 - gamma_K)): 2.001 at K = 4096.
// For K u >= 1/4 (K >= 2^22) gamma_K is no longer a useful bound; c stays at its K = 2^22 value.
ladder::ErrorBound bound_vs_exact(int64_t k);
ladder::ErrorBound bound_vs_cublas(int64_t k);

// The TF32 bounds (the tf32 series). The tensor cores read each fp32 input as TF32 (1 + 10 mantissa
// bits): rounded to nearest (cvt.rna.tf32.f32, |rel. error| <= 2^-11) or, where the hardware reads
// fp32 bits straight from shared memory (wgmma, cuBLAS), cut (|rel. error| < 2^-10): each step is
// bounded with the u_t of its own conversion (Step::tf32_input). The product of two TF32 values (11 x 11 significant bits) is
// exact in fp32; the K products are summed in fp32 inside the tensor core, which aligns and truncates
// (round toward zero: u_acc = 2^-23 per addition, twice fp32's 2^-24). So, against the exact sum:
//   |got - exact| <= ((1 + u_t)^2 (1 + gamma'_K) - 1) (|A|·|B|)ij,  gamma'_K = K u_acc / (1 - K u_acc)
//                 ~= (2 u_t + K u_acc) (|A|·|B|)ij       (2.44e-3 (|A|·|B|)ij at K = 4096)
// written as c K 2^-24 (|A|·|B|)ij with c = that factor / (K 2^-24), times 1.01 for the fp64
// reference. Against cuBLAS fp32 (the harness's whole-C reference): the TF32 bound plus cuBLAS's own
// gamma_K, over (1 - gamma_K) for the computed magnitudes. Past K u_acc = 1/4 (K = 2^21) the
// denominator of gamma'_K stays at 3/4, as the fp32 bounds' c does.
// The K-independent 2 u_t term dominates at large K: one missing product of a random K = 4096 sum
// moves it by ~1/K of the magnitude, under the ~2 u_t allowed. --init integers closes that hole:
// small integers (|x| <= 8) are exact in TF32 and fp32, their products and every partial sum (below
// 64 K <= 2^24) too, so C is known exactly and checked for equality (exact_bound): any missing or
// doubled term fails, at any K the mode accepts (kMaxIntegerK).
ladder::ErrorBound bound_tf32_vs_exact(int64_t k, Tf32Input input = Tf32Input::cut);
ladder::ErrorBound bound_tf32_vs_cublas(int64_t k, Tf32Input input = Tf32Input::cut);
// u_t (cut; rounded is half of it) and u_acc above.
constexpr double kTf32InputEps = 1.0 / 1024.0;              // 2^-10
constexpr double kTf32AccumEps = 1.0 / (1024.0 * 8192.0);   // 2^-23

// --init integers: A and B uniform integers in [-kIntegerMax, kIntegerMax]; K up to kMaxIntegerK
// keeps every partial sum of K products (|.| <= kIntegerMax^2 each) exact in fp32.
constexpr int kIntegerMax = 8;
constexpr int64_t kMaxIntegerK = (int64_t(1) << 24) / (kIntegerMax * kIntegerMax) - 1;  // 262,143
// Equality: |got - ref| <= 0.
ladder::ErrorBound exact_bound(int64_t k);
void fill_integers(float* values, int64_t count, uint64_t seed, uint64_t stream);

}  // namespace sgemm
