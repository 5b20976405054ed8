// avg_matvec step 06: the averaging at full bandwidth — 16-byte loads, four per lane and trip,
// every warp resident; then step 05's DGEMM.
// Step 05's averaging kernel moves 8 bytes per load, at most 32 bytes per lane in flight, and
// launches a block of 8 warps for every 8 rows, each living for one row. Here:
//   - 16-byte loads (double2): half the load instructions for the same bytes. A row starts on a
//     16-byte boundary only when (k*L + j) * M is even, so a row that starts 8 bytes past one takes
//     its first element alone, and an odd element left at the end is taken alone as well;
//   - kUnroll = 4 independent loads per lane and trip, written before any of them is added
//     (predicated at the end of a row, not a remainder loop): 64 bytes per lane in the source. The
//     machine code keeps fewer in flight (cuobjdump -sass build/bin/avg_matvec_06_vector_average):
//     at 32 registers nvcc issues two before the first add and has at most two pending at any
//     wait, 32 bytes per lane, 1 KiB per warp, step 05's bytes (2-16 lanes a row: two, then one);
//   - a group of kLanes lanes per row: 32 for long rows, fewer when M is small (a 33-double row
//     would otherwise leave most of a warp idle), the shuffles then run within each group;
//   - exactly as many blocks as are resident at once (occupancy API x SMs), each warp streaming
//     row after row: no block launch overhead, no tail wave.
// Changes from step 05: the averaging kernel; the DGEMM is step 05's, included unchanged.
// Why it is not faster here: step 05's averaging kernel already keeps DRAM 93% busy (Nsight
// Compute, H100, CUDA 13.0, 2026-11-26), so wider loads have nothing left to win (and the SASS
// keeps no more bytes in flight than step 05's); on the H100 step 06 is a little slower than
// step 05, at the default size (0.98x, 2026-11-27) and at (1024, 128, 8). Steps 07 and 08 build
// on it for its code: 08 calls average_rows_by_warps, which strides over the rows with whatever
// warps the grid has.
// Why not fuse the mat-vec as well: it would save V's round trip (2/M of the input's bytes) and one
// launch, but a fused kernel must re-read W per batch (step 04's problem) or be a GEMM itself,
// while the DGEMM's 2 L^2 N flops on 8 (L^2 + 2 L N) bytes are a small job for the H100.
// Costs: registers for the double2 in flight (-Xptxas -v: 32, no spills; ptxas keeps two of the
// four live at a time); rows that start off a 16-byte boundary (odd M) pay one scalar load.
// Source: beyond the post. Run: build/bin/avg_matvec_06_vector_average --L 500 --M 700 --N 999
#include "05_average_then_gemm.cu"  // matvecs_as_gemm

#include <type_traits>

namespace avg_matvec::vector_average {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;  // double2 loads per lane and trip (the SASS keeps <= 2 in flight)
static_assert(kThreads % 32 == 0, "whole warps: each warp's groups shuffle together");
static_assert(kUnroll >= 1, "at least one load per lane per pass");
static_assert(sizeof(double2) == 16 && alignof(double2) == 16, "one 16-byte load per double2");

// averages[r] = the mean of input row r (M doubles at input + r * M), r < rows, by kLanes lanes,
// this thread being in warp `warp` of `warps` (step 08 runs it inside a larger kernel).
template <int kLanes>
__device__ __forceinline__ void average_rows_by_warps(const double* __restrict__ input,
                                                      double* __restrict__ averages, int64_t rows,
                                                      int64_t M, int64_t warp, int64_t warps) {
  static_assert(kLanes >= 1 && kLanes <= 32 && (kLanes & (kLanes - 1)) == 0,
                "a power-of-two group of lanes, within one warp");
  constexpr int kGroupsPerWarp = 32 / kLanes;
  const int lane = threadIdx.x % kLanes;

  // The loop runs per warp (w), so all 32 lanes reach the shuffles together; a group whose row is
  // past the end adds nothing.
  for (int64_t w = warp; w * kGroupsPerWarp < rows; w += warps) {
    const int64_t r = w * kGroupsPerWarp + (threadIdx.x % 32) / kLanes;
    double sum = 0;
    if (r < rows) {
      // Step 1: the row's 16-byte-aligned body, kUnroll loads per lane and trip.
      const int64_t start = r * M;                            // the row's first element
      const int head = static_cast<int>(start & 1);           // 1: the row starts 8 bytes off
      const int64_t pairs = (M - head) / 2;
      const double2* body = reinterpret_cast<const double2*>(input + start + head);
      for (int64_t p = lane; p < pairs; p += kUnroll * kLanes) {
        double2 x[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
          x[u] = p + u * kLanes < pairs ? body[p + u * kLanes] : make_double2(0.0, 0.0);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) sum += x[u].x + x[u].y;
      }
      // Step 2: the elements outside the body: the head, and a last element left over.
      if (lane == 0 && head) sum += input[start];
      if (lane == kLanes - 1 && ((M - head) & 1)) sum += input[start + M - 1];
    }
    // Step 3: add the group's lanes (shuffles within groups of kLanes) and store the mean.
#pragma unroll
    for (int offset = kLanes / 2; offset > 0; offset >>= 1)
      sum += __shfl_down_sync(0xffffffffu, sum, offset, kLanes);
    if (r < rows && lane == 0) averages[r] = sum / static_cast<double>(M);
  }
}

template <int kLanes>
__global__ void __launch_bounds__(kThreads)
    average_rows_vec2(const double* __restrict__ input, double* __restrict__ averages, int64_t rows,
                      int64_t M) {
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) / 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (kThreads / 32);
  average_rows_by_warps<kLanes>(input, averages, rows, M, warp, warps);
}

// As many blocks as fit on the device at once, or fewer when there are fewer rows.
template <int kLanes>
void average_rows_resident(const Args& a) {
  static const int per_sm = ladder::blocks_per_sm(
      *a.dev, reinterpret_cast<const void*>(average_rows_vec2<kLanes>), kThreads, 0);
  const int64_t rows = a.N * a.L, groups_per_block = kThreads / kLanes;
  const int64_t blocks = std::min<int64_t>((rows + groups_per_block - 1) / groups_per_block,
                                           static_cast<int64_t>(per_sm) * a.dev->sm_count);
  average_rows_vec2<kLanes><<<static_cast<unsigned>(blocks), kThreads, 0, a.stream>>>(
      a.input, a.averages, rows, a.M);
  CUDA_CHECK_LAUNCH();
}

// Calls f(std::integral_constant<int, kLanes>{}) with the lanes per row for rows of M doubles:
// enough that each lane's kUnroll loads cover the row in one pass, at most 32 (step 08 uses it too).
template <class F>
void with_lanes_per_row(int64_t M, F&& f) {
  const int64_t per_lane = 2 * kUnroll;  // doubles one lane loads per pass
  if (M > 16 * per_lane) f(std::integral_constant<int, 32>{});
  else if (M > 8 * per_lane) f(std::integral_constant<int, 16>{});
  else if (M > 4 * per_lane) f(std::integral_constant<int, 8>{});
  else if (M > 2 * per_lane) f(std::integral_constant<int, 4>{});
  else if (M > per_lane) f(std::integral_constant<int, 2>{});
  else f(std::integral_constant<int, 1>{});
}

void launch(const Args& a) {
  with_lanes_per_row(a.M, [&](auto lanes) { average_rows_resident<decltype(lanes)::value>(a); });
  average_then_gemm::matvecs_as_gemm(a);
}

const Step kStep{"avg_matvec/06_vector_average", launch, Runs::on_gpu, BlockOfL::any,
                 /*gemm=*/true};
LADDER_STEP(kStep);

}  // namespace avg_matvec::vector_average
