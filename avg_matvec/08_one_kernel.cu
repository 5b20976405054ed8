// avg_matvec step 08: a small call as one kernel — the averaging, one grid-wide barrier, and the
// mat-vecs on the FP64 tensor cores — replayed as a graph.
// Step 07's graph still runs three kernels one after another (step 06's averaging, cuBLAS's DGEMM
// and the kernel that adds its split-K pieces), each starting only when the one before has ended.
// Here one cooperative kernel (cudaLaunchCooperativeKernel: the runtime starts every block at once
// or refuses the launch, so a grid-wide barrier never waits for a block that cannot start) does it
// all, one block of 1024 threads an SM:
//   1. step 06's averaging (vector_average::average_rows_by_warps), by every warp of the grid;
//   2. cooperative_groups::this_grid().sync(): every mean is written and visible to every block;
//   3. each block that owns 8 rows of W copies them and the N x L means into shared memory (block b
//      starts the means at batch b % 8, so that 128 blocks do not ask for the same lines at once)
//      and multiplies the rows by the means on the FP64 tensor cores: its 8 x N piece of out is the
//      shape of mma.m8n8k4.f64 (8 rows x 8 batches, 4 columns of W per instruction); each of the 32
//      warps takes 32 columns (8 mma);
//   4. the 32 warps' 8 x 8 sums are added through shared memory and stored.
// The kernel is recorded once into a graph, as step 07 records its three (cuda_graph::replay): a
// graph launch costs a caller less than cudaLaunchCooperativeKernel itself.
// Changes from step 07: one kernel, no cuBLAS, for calls with N <= 8 and L <= 1024 whose blocks of
// 8 rows all fit on the GPU at once (L = 1024: 128 blocks; the H100 holds 132). Every other size,
// a GPU without cooperative launch and one whose blocks cannot have 131,584 B of shared memory
// (GeForce cards, the L4) run step 07's graph. The record's `choice` says which ran.
// Why it helps: no kernel waits for another to end and the next to start; the mat-vec is 8 mma
// instructions a warp instead of a GEMM's tiles and a split-K pass.
// Costs: as many blocks as fit at once, no more (one an SM); a barrier at which every block waits
// for the slowest; W's 8 rows and all the means in each block's shared memory, which caps L at 1024
// and N at 8. sm_80 or newer (mma .f64 and cp.async): on an older GPU the step exits 2 naming it.
// Source: beyond the post; CUDA Programming Guide, "Grid Synchronization" (cooperative groups) and
// "CUDA Graphs"; PTX ISA, "Matrix Fragments for mma.m8n8k4 with .f64 floating point type".
// Run: build/bin/avg_matvec_08_one_kernel --L 1024 --M 128 --N 8
#include "07_cuda_graph.cu"  // cuda_graph::launch; step 06's averaging through it

#include "common/cp_async.cuh"
#include "common/mma.cuh"

#include <cooperative_groups.h>

namespace avg_matvec::one_kernel {

constexpr int kThreads = 1024;
constexpr int kWarps = kThreads / 32;
constexpr int kRows = 8;           // rows of W per block: the mma's M
constexpr int kMaxBatches = 8;     // the mma's N: batches one call may have
constexpr int kMaxL = 1024;        // columns of W (and means per batch) shared memory holds
constexpr int kColsPerWarp = kMaxL / kWarps;  // 32
constexpr int kSteps = kColsPerWarp / 4;      // mma per warp: 8
// The row pitch of W's rows and of the means in shared memory, in doubles. A fragment of A (or B)
// is 8 rows x 4 columns; with a pitch of 4 mod 16 doubles each half-warp's 16 doubles fall in 16
// different 8-byte bank pairs.
constexpr int kRowPitch = kMaxL + 4;
// A block's shared memory: its rows of W and the means; each warp's 8 x 8 sums take the means'
// place once every mma has read them. 131,584 bytes.
constexpr size_t kSharedBytes = sizeof(double) * (kRows + kMaxBatches) * kRowPitch;
static_assert(kColsPerWarp % 4 == 0 && kWarps * kColsPerWarp == kMaxL, "whole mma steps per warp");
static_assert(kRows == 8 && kRows * kMaxBatches <= kThreads, "the mma's M; a thread per output of a block");
static_assert(kWarps * 64 <= kMaxBatches * kRowPitch, "the warps' sums fit in the means' place");

// Phases 1-4 of the header. Block b < row_blocks owns rows 8b .. 8b + 7 of W; the others only
// average.
template <int kLanes>
__global__ void __launch_bounds__(kThreads)
    average_then_matvec(const double* __restrict__ input, const double* __restrict__ W,
                        double* __restrict__ averages, double* __restrict__ out, int64_t L, int64_t M,
                        int64_t N, int row_blocks) {
  extern __shared__ double shared[];
  double* w_rows = shared;                       // kRows x kRowPitch
  double* means = w_rows + kRows * kRowPitch;    // kMaxBatches x kRowPitch
  double* warp_sums = means;                     // after the mma: kWarps x 64
  const bool has_rows = blockIdx.x < row_blocks;
  const int64_t row0 = static_cast<int64_t>(blockIdx.x) * kRows;

  // Phase 1: the N x L means, as step 06 computes them, by every warp of the grid.
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) / 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarps;
  vector_average::average_rows_by_warps<kLanes>(input, averages, N * L, M, warp, warps);

  // Phase 2: wait for every block; the barrier orders their stores of the means before the loads
  // below (which bypass L1: __ldcg).
  cooperative_groups::this_grid().sync();
  if (!has_rows) return;

  // Phase 3: the block's 8 rows of W (cp.async, in flight while the means are loaded) and the N x L
  // means into shared memory, zeros past W's last row and column and past N; then warp w
  // multiplies columns 32w .. 32w + 31 of the rows by the same columns of the means: 8 mma, A from
  // W's rows (lane 4g + t: row g, column t of each group of 4), B from the means (batch g, column
  // t). Two chains of accumulators (even and odd steps), so that each mma waits for the one before
  // the last, not the last.
  for (int e = threadIdx.x; e < kRows * kMaxL; e += kThreads) {
    const int r = e / kMaxL, c = e % kMaxL;
    const bool inside = row0 + r < L && c < L;
    ladder::cp_async_8(w_rows + r * kRowPitch + c, inside ? W + (row0 + r) * L + c : W, inside);
  }
  ladder::cp_async_commit();
  for (int e0 = threadIdx.x; e0 < kMaxBatches * kMaxL; e0 += kThreads) {
    // Block b starts at batch b % 8, so that the blocks do not all ask for the same lines at once.
    const int e = (e0 + static_cast<int>(blockIdx.x % kMaxBatches) * kMaxL) % (kMaxBatches * kMaxL);
    const int batch = e / kMaxL, c = e % kMaxL;
    means[batch * kRowPitch + c] = batch < N && c < L ? __ldcg(averages + batch * L + c) : 0.0;
  }
  ladder::cp_async_wait<0>();
  __syncthreads();  // the means are stored and every thread's copies of W have landed
  const int lane = threadIdx.x % 32, warp_in_block = threadIdx.x / 32;
  const int g = lane / 4, t = lane % 4, cols = warp_in_block * kColsPerWarp;
  double d[2][2] = {};  // chain s % 2: D[g][2t], D[g][2t + 1] (row g, batches 2t and 2t + 1)
#pragma unroll
  for (int s = 0; s < kSteps; ++s)
    ladder::mma_m8n8k4_f64(d[s % 2], w_rows[g * kRowPitch + cols + 4 * s + t],
                           means[g * kRowPitch + cols + 4 * s + t]);
  __syncthreads();  // every warp has read the means: their place takes the sums
  warp_sums[warp_in_block * 64 + 2 * lane] = d[0][0] + d[1][0];
  warp_sums[warp_in_block * 64 + 2 * lane + 1] = d[0][1] + d[1][1];
  __syncthreads();

  // Phase 4: thread e < 64 adds element e = 8 row + batch of the 32 warps' sums, in warp order.
  if (threadIdx.x < 64) {
    const int64_t i = row0 + threadIdx.x / 8;
    const int n = threadIdx.x % 8;
    double sum = 0;
    for (int w = 0; w < kWarps; ++w) sum += warp_sums[w * 64 + threadIdx.x];
    if (i < L && n < N) out[i * N + n] = sum;
  }
}

// Blocks for a call, or why the one kernel cannot take it.
enum class Refusal { none, shared_memory, batches, width, no_cooperative_launch, too_many_blocks };
struct Plan {
  Refusal refusal = Refusal::none;
  int64_t row_blocks = 0, resident = 0;  // blocks with rows of W; blocks that fit at once
  int blocks = 0;                        // the grid, when the one kernel takes the call
};

template <int kLanes>
Plan plan_for(const Args& a) {
  Plan plan;
  plan.row_blocks = (a.L + kRows - 1) / kRows;
  if (a.dev->smem_per_block_optin < kSharedBytes) {  // GeForce GPUs, the L4: about 100 KB a block
    plan.refusal = Refusal::shared_memory;
    return plan;
  }
  const void* kernel = reinterpret_cast<const void*>(average_then_matvec<kLanes>);
  static const int per_sm = [&] {
    ladder::require_shared_memory(kernel, kSharedBytes, *a.dev, "avg_matvec 08's kernel");
    return ladder::blocks_per_sm(*a.dev, kernel, kThreads, kSharedBytes);
  }();
  static const bool cooperative = [&] {
    int supported = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrCooperativeLaunch, a.dev->index));
    return supported != 0;
  }();
  plan.resident = static_cast<int64_t>(per_sm) * a.dev->sm_count;
  if (a.N > kMaxBatches) plan.refusal = Refusal::batches;
  else if (a.L > kMaxL) plan.refusal = Refusal::width;
  else if (!cooperative) plan.refusal = Refusal::no_cooperative_launch;
  else if (plan.row_blocks > plan.resident) plan.refusal = Refusal::too_many_blocks;
  // Enough warps for the averaging too (a group of kLanes lanes per row), up to what fits.
  const int64_t averaging = (a.N * a.L + kThreads / kLanes - 1) / (kThreads / kLanes);
  plan.blocks = static_cast<int>(std::min(plan.resident, std::max(plan.row_blocks, averaging)));
  return plan;
}

// The record's choice: which path ran, and why.
std::string describe(const Plan& plan, const Args& a) {
  const std::string graph = "step 07's graph: ";
  switch (plan.refusal) {
    case Refusal::none:
      return "one kernel, replayed as a graph: " + std::to_string(plan.blocks) + " blocks, " +
             std::to_string(plan.row_blocks) + " of them with 8 rows of W";
    case Refusal::shared_memory:
      return graph + "the kernel needs " + std::to_string(kSharedBytes) + " B of shared memory a block, this GPU allows " +
             std::to_string(a.dev->smem_per_block_optin);
    case Refusal::batches: return graph + "N = " + std::to_string(a.N) + " > " + std::to_string(kMaxBatches);
    case Refusal::width: return graph + "L = " + std::to_string(a.L) + " > " + std::to_string(kMaxL);
    case Refusal::no_cooperative_launch: return graph + "this GPU has no cooperative launch";
    case Refusal::too_many_blocks:
      return graph + std::to_string(plan.row_blocks) + " blocks of 8 rows, " + std::to_string(plan.resident) +
             " fit at once";
  }
  return graph;
}

// The one kernel, launched on a.stream: what the graph records.
template <int kLanes>
void launch_cooperative(const Args& a) {
  const Plan plan = plan_for<kLanes>(a);
  const double* input = a.input;
  const double* W = a.W;
  double* averages = a.averages;
  double* out = a.out;
  int64_t L = a.L, M = a.M, N = a.N;
  int row_blocks = static_cast<int>(plan.row_blocks);
  void* params[] = {&input, &W, &averages, &out, &L, &M, &N, &row_blocks};
  CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(average_then_matvec<kLanes>),
                                         dim3(static_cast<unsigned>(plan.blocks)), dim3(kThreads), params,
                                         kSharedBytes, a.stream));
  CUDA_CHECK_LAUNCH();
}

// The one kernel replayed as a graph (step 07's replay: a graph launch costs the caller less than
// cudaLaunchCooperativeKernel), or step 07's graph of three kernels for a call it cannot take.
template <int kLanes>
void launch_one_kernel(const Args& a) {
  const Plan plan = plan_for<kLanes>(a);
  if (a.choice && a.choice->empty()) *a.choice = describe(plan, a);  // worded once, not every call
  if (plan.refusal == Refusal::none) cuda_graph::replay(a, launch_cooperative<kLanes>);
  else cuda_graph::launch(a);
}

void launch(const Args& a) {
  vector_average::with_lanes_per_row(a.M, [&](auto lanes) { launch_one_kernel<decltype(lanes)::value>(a); });
}

// gemm = true: the harness keeps the N x L averages in device memory, and the cuBLAS handle that
// step 07's graph needs for the sizes this kernel does not take.
const Step kStep{"avg_matvec/08_one_kernel", launch, Runs::on_gpu, BlockOfL::any, /*gemm=*/true};
LADDER_STEP(kStep);

}  // namespace avg_matvec::one_kernel
