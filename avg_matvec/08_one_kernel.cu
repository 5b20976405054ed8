// avg_matvec step 08: the whole problem in one launch — the averaging, a grid-wide barrier, the
// mat-vecs — so that a call is one kernel however small the problem.
// Step 07's graph still runs two kernels: the DGEMM cannot start before the averaging kernel has
// ended and the GPU has launched the next one, and cuBLAS's DGEMM is built for big products, not for
// eight columns. Here one cooperative kernel (cudaLaunchCooperativeKernel: every block resident at
// once, so that a grid-wide barrier cannot deadlock) does
//   1. step 06's averaging, unchanged (average_rows_by_warps), into the N x L averages;
//   2. grid.sync(): every average is written and visible to every block;
//   3. the mat-vecs: a block per (row i of W, group of up to kBatchesPerPass batches), its 256
//      threads striding along the row (coalesced reads of W, several in flight per thread),
//      kBatchesPerPass sums per thread, added by shuffles and then across the block's warps. With
//      N <= kBatchesPerPass, W is read exactly once; the averages (8 N L bytes) stay in the L1 and
//      L2 caches. (A warp per row instead leaves each lane a long chain of loads one after another:
//      at L = 1024 the kernel took twice as long.)
// Changes from step 07: no graph and no cuBLAS; the averaging kernel's body becomes phase 1 of one
// kernel, and a hand-written mat-vec replaces the DGEMM.
// Why it helps: one launch and no gap between the phases, only a barrier. What it costs: past a few
// groups of batches the mat-vec re-reads W once per group and every average once per row: a GEMM
// without tiles. At the default size (N = 1024: 128 groups) it is far slower than step 05's DGEMM;
// it is the step for small problems, where launches decide the time.
// Source: beyond the post; CUDA Programming Guide, "Grid Synchronization" (cooperative groups).
// Run: build/bin/avg_matvec_08_one_kernel --L 1024 --M 128 --N 8
#include "06_vector_average.cu"  // vector_average::average_rows_by_warps, with_lanes_per_row

#include <cooperative_groups.h>

namespace avg_matvec::one_kernel {

constexpr int kThreads = vector_average::kThreads;
constexpr int kBatchesPerPass = 8;  // sums each thread keeps in registers in phase 3
constexpr int kUnrollJ = 4;         // loads of W each thread has in flight in phase 3
constexpr int kMinBlocksPerSm = 4;  // registers capped at 64 a thread: 4 blocks of 256 on an SM
static_assert(kThreads >= kBatchesPerPass, "phase 3 stores a group's sums with one thread each");

template <int kLanes>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm)
    average_then_matvec(const double* __restrict__ input, const double* __restrict__ W,
                        double* __restrict__ averages, double* __restrict__ out, int64_t L, int64_t M,
                        int64_t N) {
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) / 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (kThreads / 32);

  // Phase 1: the row means, as step 06 computes them.
  vector_average::average_rows_by_warps<kLanes>(input, averages, N * L, M, warp, warps);

  // Phase 2: wait for every block; the barrier orders their stores before the loads below.
  cooperative_groups::this_grid().sync();

  // Phase 3: out[i*N + k] = sum_j W[i][j] * averages[k*L + j], a block per (row i of W, group of
  // up to kBatchesPerPass batches): its threads stride along the row (coalesced reads of W and of
  // the averages), kBatchesPerPass sums each, kUnrollJ loads of W in flight per thread; a shuffle
  // sum per warp, then the warps' sums through shared memory. The loop runs per block (every
  // thread takes the same tasks), so all threads reach the barriers together.
  __shared__ double warp_sums[kThreads / 32][kBatchesPerPass];
  const int lane = threadIdx.x % 32, warp_in_block = threadIdx.x / 32;
  const int64_t groups = (N + kBatchesPerPass - 1) / kBatchesPerPass;
  for (int64_t task = blockIdx.x; task < L * groups; task += gridDim.x) {
    const int64_t i = task / groups, k0 = (task % groups) * kBatchesPerPass;
    const int batches = static_cast<int>(N - k0 < kBatchesPerPass ? N - k0 : kBatchesPerPass);
    const double* w_row = W + i * L;
    const double* v = averages + k0 * L;
    double sum[kBatchesPerPass] = {};
#pragma unroll kUnrollJ
    for (int64_t j = threadIdx.x; j < L; j += kThreads) {
      const double w = w_row[j];
#pragma unroll
      for (int b = 0; b < kBatchesPerPass; ++b)
        if (b < batches) sum[b] += w * v[b * L + j];
    }
#pragma unroll
    for (int b = 0; b < kBatchesPerPass; ++b) {
      const double warp_total = warp_sum(sum[b]);
      if (lane == 0) warp_sums[warp_in_block][b] = warp_total;
    }
    __syncthreads();
    if (threadIdx.x < batches) {
      double total = 0;
#pragma unroll
      for (int w = 0; w < kThreads / 32; ++w) total += warp_sums[w][threadIdx.x];
      out[i * N + k0 + threadIdx.x] = total;
    }
    __syncthreads();  // warp_sums is rewritten by the next task
  }
}

// As many blocks as are resident at once (a cooperative launch may not ask for more), or fewer when
// neither phase has that much work.
template <int kLanes>
void launch_one_kernel(const Args& a) {
  const void* kernel = reinterpret_cast<const void*>(average_then_matvec<kLanes>);
  static const int per_sm = ladder::blocks_per_sm(*a.dev, kernel, kThreads, 0);
  const int64_t rows = a.N * a.L, row_groups_per_block = kThreads / kLanes;
  const int64_t tasks = a.L * ((a.N + kBatchesPerPass - 1) / kBatchesPerPass);  // a block each
  const int64_t wanted = std::max((rows + row_groups_per_block - 1) / row_groups_per_block, tasks);
  const int64_t blocks = std::max<int64_t>(
      1, std::min<int64_t>(wanted, static_cast<int64_t>(per_sm) * a.dev->sm_count));
  const double* input = a.input;
  const double* W = a.W;
  double* averages = a.averages;
  double* out = a.out;
  int64_t L = a.L, M = a.M, N = a.N;
  void* params[] = {&input, &W, &averages, &out, &L, &M, &N};
  CUDA_CHECK(cudaLaunchCooperativeKernel(kernel, dim3(static_cast<unsigned>(blocks)), dim3(kThreads), params, 0,
                                         a.stream));
  CUDA_CHECK_LAUNCH();
}

void launch(const Args& a) {
  vector_average::with_lanes_per_row(a.M, [&](auto lanes) { launch_one_kernel<decltype(lanes)::value>(a); });
}

// gemm = true: the harness keeps the N x L averages in device memory for phase 1 (the cuBLAS
// handle it also creates goes unused).
const Step kStep{"avg_matvec/08_one_kernel", launch, Runs::on_gpu, BlockOfL::any, /*gemm=*/true};
LADDER_STEP(kStep);

}  // namespace avg_matvec::one_kernel
