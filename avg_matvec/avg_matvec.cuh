// avg_matvec: average, then multiply — N batches of "mean over M, then an L x L matrix times the
// mean", in double (the post "【CUDA】Nsight profile驱动的CUDA优化").
//
//   input  N x L x M   input[(k*L + j)*M + i]: batch k, row j, element i — row j of batch k is M
//                      consecutive doubles, and v[k][j] is their mean
//   W      L x L       row-major
//   out    L x N       out[i*N + k] = sum_j W[i][j] * v[k][j]: column k is W · v[k]
//
// Flags --L --M --N (the post's names; default 512, 512, 1024: 2.15 GB of input, 43x the H100's L2)
// and --init random|posts. What every step of this folder shares lives here and in avg_matvec.cu:
// the inputs (seeded; `random` uniform in [-1, 1), `posts` the post's 1-or-2 values), the CPU
// reference (OpenMP, with the magnitudes that bound its rounding), the check, the bytes the problem
// must move and the ceiling (the bandwidth ceiling of common/: the best of copies and read kernels,
// and the floor it implies: the input's bytes at that bandwidth). A step supplies a launcher and,
// for the steps that run one block of L threads, the limit that puts on L.
#pragma once

#include "common/blas.h"
#include "common/check.h"
#include "common/device.h"
#include "common/step.h"
#include "common/verify.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace avg_matvec {

constexpr int64_t kDefaultL = 512;   // the post's my_L ("maximum 1024": its <<<1, L>>> block)
constexpr int64_t kDefaultM = 512;
constexpr int64_t kDefaultN = 1024;

struct Sizes {
  int64_t L, M, N;
};

enum class Init { random, posts };

// What one run works on. GPU steps get device pointers and a stream; the CPU step gets host
// pointers and no stream.
struct Args {
  const ladder::DeviceInfo* dev;
  int64_t L, M, N;
  const double* input;          // N x L x M
  const double* W;              // L x L
  double* out;                  // L x N
  double* averages;             // N x L, averages[k*L + j] = v[k][j]: steps with Step::gemm only
  const ladder::Cublas* blas;   // steps with Step::gemm only
  cudaStream_t stream;
  std::string* choice = nullptr;  // where a step that picks a path says which ran (the record's choice)
  double* graph_setup_ms = nullptr;  // where a step that records a CUDA Graph puts the host time of
                                     // capturing and instantiating it (the record's graph_setup_ms)
};

using LaunchFn = void (*)(const Args& a);

enum class Runs { on_gpu, on_cpu };

// The limit of a step that runs one block of L threads, one thread per row (steps 01-04). Every
// other step takes any L, M, N.
enum class BlockOfL {
  any,
  power_of_two,  // L <= 1024 and a power of two: the post's shared-memory sweep halves blockDim.x
  whole_warps,   // L <= 1024 and a multiple of 32: blockDim (32, L/32), a full warp per row
};

// A step, declared in its file as an aggregate:
//   const Step kStep{"avg_matvec/02_block_per_batch", launch, Runs::on_gpu,
//                    BlockOfL::power_of_two};
//   const Step kStep{"avg_matvec/05_average_then_gemm", launch, Runs::on_gpu, BlockOfL::any, true};
struct Step {
  const char* id;
  LaunchFn launch;
  Runs runs = Runs::on_gpu;
  BlockOfL limit = BlockOfL::any;
  bool gemm = false;   // keeps the N x L averages in device memory and calls cuBLAS (Args::blas)
};

// The folder's main: flags, inputs, reference, checks, timing, ceiling, report.
int run(const Step& step, int argc, char** argv);

// Whether a step with `limit` takes this L.
bool accepts(BlockOfL limit, int64_t L);
// Throws ladder::UsageError (exit 2) with one line naming the limit when the step does not take L.
void require_supported(BlockOfL limit, const std::string& step_name, int64_t L);

// The inputs: a pure function of (seed, init, sizes). random: uniform in [-1, 1) (signs, so the
// mat-vec cancels and the check must bound by magnitudes); posts: 1 or 2 with equal odds, as the
// post's (rand() & 1) + 1. input has N*L*M elements, W has L*L.
void make_inputs(double* input, double* W, const Sizes& s, Init init, uint64_t seed);

// The reference, deliberately not the code of any step: row means with contiguous reads (OpenMP
// over rows), then the N mat-vecs (OpenMP over output elements). Also the magnitude of each output,
//   magnitude[i*N + k] = sum_j |W[i][j]| * (1/M) sum_i' |input[k][j][i']|,
// which bounds every rounding error of the computation (error_bound below).
void reference(const double* input, const double* W, const Sizes& s, double* out,
               double* magnitude);

// How far a step's out may be from the reference's, as ladder::verify_bounded's
// |got - ref| <= c * terms * eps * magnitude (derivation in avg_matvec.cu):
//   posts data with M a power of two: exact (every intermediate is a multiple of 1/M below 2^53/M);
//   otherwise: terms = L + M + 2, c = 2, eps = 2^-53.
ladder::ErrorBound error_bound(const Sizes& s, Init init);
bool posts_are_exact(const Sizes& s);

// Bytes the problem must move: the input, W and out, each once (the metric), and the input alone
// (the floor: no step can finish before the input has streamed through).
inline double input_bytes(const Sizes& s) {
  return 8.0 * static_cast<double>(s.N) * static_cast<double>(s.L) * static_cast<double>(s.M);
}
inline double min_bytes(const Sizes& s) {
  const double L = static_cast<double>(s.L), N = static_cast<double>(s.N);
  return input_bytes(s) + 8.0 * (L * L + L * N);
}

// ---- Shared by the GPU steps --------------------------------------------------------------------

constexpr int64_t kMaxGridX = 2147483647;  // gridDim.x

// The largest input whose copy call time a GPU step's record carries (copy_call_ms): sizes where
// launches, not bandwidth, can decide a call's time.
constexpr size_t kCopyCallMaxBytes = size_t(256) << 20;

#ifdef __CUDACC__
// The launch of steps 02-04: block k does batch k, with `block` threads and L doubles of shared
// memory. gridDim.x stops at 2^31 - 1, so a larger N goes in chunks of batches, each kernel seeing
// its chunk's input and out shifted to its first batch (out keeps its row pitch N). One chunk at
// every size that fits in memory with L >= 32; L = M = 1 with N past 2^31 is 17 GB, and fits.
using BatchKernel = void (*)(const double*, const double*, double*, int, int64_t, int64_t);
inline void launch_block_per_batch(BatchKernel kernel, const Args& a, dim3 block) {
  for (int64_t k0 = 0; k0 < a.N; k0 += kMaxGridX) {
    const auto batches = static_cast<unsigned>(std::min(a.N - k0, kMaxGridX));
    kernel<<<batches, block, a.L * sizeof(double), a.stream>>>(a.input + k0 * a.L * a.M, a.W,
                                                                a.out + k0, static_cast<int>(a.L),
                                                                a.M, a.N);
    CUDA_CHECK_LAUNCH();
  }
}

// The sum of `v` over the lanes of a full warp, in lane 0: five __shfl_down_sync, no shared memory
// (the post's section 4, "Shuffle warp"). Every lane of the warp must call it.
__device__ __forceinline__ double warp_sum(double v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}
#endif

}  // namespace avg_matvec
