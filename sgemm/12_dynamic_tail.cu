// sgemm step 12: a dynamic tail — the last wave's tiles cut into pieces of k that the SMs take from
// a counter, so that no SM ends the launch with a whole tile left to do.
// Step 11 runs step 09's kernel wherever C has waves of tiles: at 4096^3, 512 tiles of 128 x 256 on
// 132 SMs, one at a time each. The hardware hands each SM a new tile when it finishes one, which
// balances whole tiles only: the last 116 tiles start wherever an SM comes free and the launch ends
// when the slowest of them ends. And the SMs are not equally fast at step 09's loop: it is 73 KB of
// code, more than an SM's instruction cache keeps (about 30 KB), and SMs far from where the code is
// fetched from run a tile up to a third slower (the chapter's appendix measures it: 696-701 us a
// tile on the median SM, up to 1.30 and 1.35 times that on the slowest in two traces). Their last
// tiles end late.
// Here the tiles of the last, partial wave are cut into Q pieces along k, and the work is handed out
// in two parts in one launch:
//  * blocks 0 .. full - 1 (full = the whole waves' tiles) run step 09's tile loop on a tile each,
//    the hardware handing them out as before;
//  * the blocks after them, one per block slot, are workers: each takes the next piece from a
//    counter (atomicAdd), runs the same tile loop on that tile and that slice of k, writes its
//    partial tile to a workspace, and takes the next piece, until none is left. A worker starts
//    when an SM comes free, so a slow SM takes fewer pieces and every SM ends within about a piece
//    of the others;
//  * the last piece of a tile to finish (a counter per tile, __threadfence, as in step 11's
//    last-block sum) adds the tile's Q partials in slice order and stores the tile: the same
//    additions in the same order on every run, no float atomics — deterministic.
// Q: enough pieces for about four per block slot (the smallest power of two with tail x Q >= 4 x
// slots), each piece at least 16 k steps of BK (a piece pays the pipeline's prologue, its partial's
// write and the sum once). At 4096^3 on an H100: 396 tiles whole, 116 in 8 pieces of 512 k. Only
// where k >= 3072 (09's "long k"): a tile's time grows with k and a piece's partial tile does not,
// and at 4000 x 3000 x 2000 the cut (120 tiles in 7 pieces of 288 k) ran at 89.1% of cuBLAS where
// the uncut kernel runs at 94.6%.
// H100, CUDA 13.0, 2026-11-27, three processes each, % of cuBLAS in the same process: 4096^3
// 94.6% in all three (09: 92.6-92.8%), 8192 x 4096 x 4096 97.4% (09: 94.6-95.0%). Q came from a
// build of step 09 with the same tail: Q = 4, 8, 16, 32 gave 94.0, 94.7, 94.1 and 90.5% at 4096^3
// (09 92.1-92.9%).
// Every other shape runs as step 11 (whole waves, a k under 3072, or a tiling without a tail kernel
// run step 09's kernel unchanged); the choice line says which and why. Not tunable, as step 11:
// --tile is a usage error (exit 2). Needs cp.async: sm_80 or newer (exit 2 on older GPUs).
// Changes from step 11: the tail kernel (a whole tile or pieces, one tile loop), the piece counter
// and the per-tile counters (a __device__ array; the last worker out and each tile's last piece
// reset them), the workspace (Step::workspace_bytes), the rule for Q. Step 09's tile loop is now
// pipelined_tile_at (any tile, the accumulators handed to a finish function) so that this kernel
// runs it unchanged.
// Costs: a partial tile per piece, written once and read once (at 4096^3, 928 pieces of 128 KiB:
// 116 MiB), a k-loop prologue per piece, and one more kernel per tiling in the build. The
// counters live in global memory of this process: two launches of this step at once on different
// streams would share them (the harness runs one at a time, as step 11).
// Source: stream-K (Osama, Merrill, Cecka, Garland, Kerr, "Stream-K: Work-centric Parallel
// Decomposition for Dense Matrix-Matrix Multiplication on the GPU", PPoPP 2023) splits the last
// wave's work in equal static shares (the TF32 ladder's tf32_04 _sk and _tail variants); here the
// shares are taken from a counter instead, which keeps the hardware's balancing for SMs that are
// not equally fast. The last-block sum is the CUDA samples' threadFenceReduction.
// Run: build/bin/sgemm_12_dynamic_tail --m 4096 (or --m 8192: 100 of 1,024 tiles cut)
#include "11_shape_classes.cu"  // steps 09-11: pipelined_tile_at, 09's default tiling, 11's classes

#include <string>

namespace sgemm::dynamic_tail {

using warptiling::WarpTile;

constexpr int kPiecesPerSlot = 4;     // pieces to hand out: at least this many per block slot
constexpr int kMinPieceSteps = 16;    // k steps (of BK) in a piece at least
constexpr int64_t kMaxTailTiles = 16384;  // per-tile counters; a tail of more tiles is not cut

// g_counters[0]: the next piece; [1]: workers done; [2 + i]: pieces of tail tile i finished.
// Zero at load; the last worker out resets [0] and [1], the last piece of a tile its own counter.
__device__ int g_counters[2 + kMaxTailTiles];

// The cut: tiles 0 .. full - 1 whole, tiles full .. full + tail - 1 in `pieces` slices of k_piece.
struct Cut {
  int64_t full = 0, tail = 0, pieces = 1, k_piece = 0, workers = 0;
};

// Block b < full: tile b, whole. Block b >= full: a worker, pieces from the counter until none is
// left. One inlined tile loop for both: a build whose whole tiles ran 09's tile function apart, a
// second copy of the 73 KB loop in the kernel (and 16 bytes of spills), ran at 87.4% of cuBLAS at
// 4096^3 (H100, three processes).
template <class T, int Stages, int MinBlocks, bool VecB>
__global__ void __launch_bounds__(T::THREADS, MinBlocks)
    sgemm_dynamic_tail(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                       int64_t m, int64_t n, int64_t k, int64_t tiles_n, int64_t full, int tail,
                       int pieces, int64_t k_piece, float* __restrict__ partials) {
  constexpr int kAcc = T::TM * T::TN;             // accumulators a thread
  constexpr int64_t kPiece = int64_t(T::THREADS) * kAcc;  // floats of one partial tile
  const bool worker = blockIdx.x >= full;
  const int tid = threadIdx.x;
  __shared__ int next_piece, last_piece;
  for (bool first = true;; first = false) {
    int64_t tile = blockIdx.x, k0 = 0, kc = k;
    if (!worker) {
      if (!first) break;
    } else {
      if (tid == 0) next_piece = atomicAdd(&g_counters[0], 1);
      __syncthreads();
      const int p = next_piece;
      if (p >= tail * pieces) break;
      const int slice = p % pieces;
      tile = full + p / pieces, k0 = slice * k_piece, kc = k - k0 < k_piece ? k - k0 : k_piece;
    }
    const TileOrigin origin = tile_origin_of(tile, tiles_n, T::BM, T::BN);
    // A's rows keep their pitch k; B's slice starts k0 rows down.
    pipelined::pipelined_tile_at<T, Stages, VecB>(
        origin, A + k0, k, B + k0 * n, C, m, n, kc,
        // The finish captures only the kernel's parameters, and takes the piece from shared memory
        // and the thread from threadIdx again: a value it captures from the code above (the worker
        // flag, the piece's tile and slice, the thread) is live through the whole tile loop, in a
        // register the loop's schedule no longer has. Captured, the step ran at 93.3-93.4% of
        // cuBLAS at 4096^3; not, 94.4% (three processes each, in turn; H100, 2026-11-27).
        [=](const T& wt, float (&acc)[T::TM][T::TN], float* c_tile, int m_left, int n_left) {
          if (blockIdx.x < full) return wt.template store<VecB>(c_tile, acc, 0, 0, m_left, n_left, n);
          const int tid = threadIdx.x;
          const int tail_tile = next_piece / pieces, slice = next_piece % pieces;
          // A piece: its partial to the workspace (a thread's accumulators THREADS floats apart, so
          // a warp writes 128 contiguous bytes each time), then count it in.
          float* const tile_partials = partials + int64_t(tail_tile) * pieces * kPiece;
          float* const mine = tile_partials + slice * kPiece + tid;
#pragma unroll
          for (int i = 0; i < T::TM; ++i)
#pragma unroll
            for (int j = 0; j < T::TN; ++j) __stcg(mine + (i * T::TN + j) * T::THREADS, acc[i][j]);
          __threadfence();  // the partial is visible in L2 before the counter says so
          __syncthreads();
          if (tid == 0) last_piece = atomicAdd(&g_counters[2 + tail_tile], 1) == pieces - 1;
          __syncthreads();
          if (!last_piece) return;
          // The tile's last piece: every partial, this one's too, added in slice order.
          __threadfence();
#pragma unroll
          for (int i = 0; i < T::TM; ++i)
#pragma unroll
            for (int j = 0; j < T::TN; ++j) acc[i][j] = __ldcg(tile_partials + (i * T::TN + j) * T::THREADS + tid);
#pragma unroll 1
          for (int s = 1; s < pieces; ++s) {
            const float* part = tile_partials + s * kPiece + tid;
#pragma unroll
            for (int i = 0; i < T::TM; ++i)
#pragma unroll
              for (int j = 0; j < T::TN; ++j) acc[i][j] += __ldcg(part + (i * T::TN + j) * T::THREADS);
          }
          if (tid == 0) g_counters[2 + tail_tile] = 0;
          wt.template store<VecB>(c_tile, acc, 0, 0, m_left, n_left, n);
        });
    __syncthreads();  // the next piece's prologue overwrites the stages this one read, and the next
                      // atomicAdd next_piece, which every thread has read
  }
  // The last worker out: every piece number has been drawn, so the counter can start over.
  if (worker && tid == 0 && atomicAdd(&g_counters[1], 1) == static_cast<int>(gridDim.x - full) - 1) {
    g_counters[0] = 0;
    g_counters[1] = 0;
  }
}

// A tiling of step 09 this step can cut: its kernel here, matched to 09's candidate by name.
struct TailTiling {
  const char* name;
  int bm, bn, bk, stages, threads, smem;
  int64_t partial_floats;  // floats of one piece's partial tile
  void (*run)(const Gemm& g, const Cut& cut);
};

template <class T, int Stages, int MinBlocks>
struct Tail {
  using P = pipelined::Pipelined<T, Stages, MinBlocks>;
  static void run(const Gemm& g, const Cut& cut) {
    for (const void* k : {reinterpret_cast<const void*>(sgemm_dynamic_tail<T, Stages, MinBlocks, true>),
                          reinterpret_cast<const void*>(sgemm_dynamic_tail<T, Stages, MinBlocks, false>)})
      ladder::require_shared_memory(k, P::kSmem, *g.dev, "the pipelined tile");
    const TileGrid grid = tile_grid(g.m, g.n, T::BM, T::BN);
    auto kernel = g.n % 4 == 0 ? sgemm_dynamic_tail<T, Stages, MinBlocks, true>
                               : sgemm_dynamic_tail<T, Stages, MinBlocks, false>;
    kernel<<<static_cast<unsigned>(cut.full + cut.workers), T::THREADS, P::kSmem, g.stream>>>(
        g.A, g.B, g.C, g.m, g.n, g.k, grid.tiles_n, cut.full, static_cast<int>(cut.tail),
        static_cast<int>(cut.pieces), cut.k_piece, static_cast<float*>(g.workspace));
    CUDA_CHECK_LAUNCH();
  }
  static constexpr TailTiling entry(const char* name) {
    return {name, T::BM, T::BN, T::BK, Stages, T::THREADS, P::kSmem, int64_t(T::THREADS) * T::TM * T::TN, run};
  }
};

// The tilings step 09's default picks for shapes with more than a wave of tiles on the GPUs the suite
// covers: the large ones (128 x 256, BK 32 or 16 by what fits) and the medium one with the largest
// thread tile. Any other default runs step 09's kernel uncut (the choice line says so).
const TailTiling kTailTilings[] = {
    Tail<WarpTile<128, 256, 32, 64, 64, 8, 16>, 3, 1>::entry("128x256x32_8x16_w64x64_s3"),
    Tail<WarpTile<128, 256, 16, 64, 64, 8, 16>, 2, 1>::entry("128x256x16_8x16_w64x64_s2"),
    Tail<WarpTile<128, 128, 8, 64, 64, 16, 8>, 3, 2>::entry("128x128x8_16x8_w64x64_s3"),
};

constexpr const char* kId = "sgemm/12_dynamic_tail";

// What runs: step 11's plan, except where it runs step 09's kernel on waves of tiles with a partial
// last wave: there the tail is cut when the tiling is one of kTailTilings and the cut is worth it.
struct Plan {
  const TailTiling* tiling = nullptr;  // null: step 11 as it is
  Cut cut;
  std::string why_not;  // a shape with waves of tiles left uncut: the reason
};

Plan plan(const Gemm& g) {
  Plan p;
  if (shape_classes::plan(g).kind != shape_classes::Kind::pipelined) return p;
  const pipelined::Choice ch = pipelined::default_choice(g);
  const pipelined::Candidate& c = *ch.tiling;
  const int64_t tiles = ch.tiles, slots = ch.slots;
  if (tiles <= slots || tiles % slots == 0) {
    p.why_not = tiles <= slots ? "one wave or less" : "whole waves";
    return p;
  }
  if (g.k < pipelined::kLongK) {  // a tile's time grows with k, a piece's partial tile does not
    p.why_not = "k < " + std::to_string(pipelined::kLongK) +
                ": the pieces' partial tiles would cost more than the tail";
    return p;
  }
  for (const TailTiling& t : kTailTilings)
    if (std::string(t.name) == c.name && t.bm == c.bm && t.bn == c.bn && t.bk == c.bk && t.stages == c.stages &&
        t.threads == c.threads && t.smem == c.smem)
      p.tiling = &t;
  if (!p.tiling) {
    p.why_not = std::string("no tail kernel for ") + c.name;
    return p;
  }
  Cut& cut = p.cut;
  cut.tail = tiles % slots, cut.full = tiles - cut.tail, cut.workers = slots;
  int64_t pieces = 1;
  while (cut.tail * pieces < kPiecesPerSlot * slots) pieces *= 2;
  pieces = std::min(pieces, g.k / (int64_t(kMinPieceSteps) * c.bk));
  if (pieces < 2 || cut.tail > kMaxTailTiles) {
    p.tiling = nullptr;
    p.why_not = pieces < 2 ? "k too short to cut" : "too many tail tiles";
    return p;
  }
  cut.k_piece = ((g.k + pieces - 1) / pieces + c.bk - 1) / c.bk * c.bk;
  cut.pieces = (g.k + cut.k_piece - 1) / cut.k_piece;
  return p;
}

size_t workspace_bytes(const Gemm& g) {
  const Plan p = plan(g);
  if (!p.tiling) return shape_classes::workspace_bytes(g);
  return static_cast<size_t>(p.cut.tail * p.cut.pieces * p.tiling->partial_floats) * sizeof(float);
}

void launch(const Gemm& g) {
  const Plan p = plan(g);
  if (!p.tiling) return shape_classes::launch(g);
  p.tiling->run(g, p.cut);
}

std::string describe(const Gemm& g) {
  const Plan p = plan(g);
  if (!p.tiling) {
    const std::string eleven = shape_classes::describe(g);
    return p.why_not.empty() ? eleven : "not cut (" + p.why_not + "): " + eleven;
  }
  const Cut& c = p.cut;
  return std::string("dynamic tail: step 09's ") + p.tiling->name + ", " + std::to_string(c.full) +
         " tiles whole, the last " + std::to_string(c.tail) + " in " + std::to_string(c.pieces) + " pieces of " +
         std::to_string(c.k_piece) + " k (" + std::to_string(c.tail * c.pieces) + " pieces) taken by " +
         std::to_string(c.workers) + " workers (" + std::to_string(g.dev->sm_count) + " SMs x " +
         std::to_string(c.workers / g.dev->sm_count) + " block(s) per SM)";
}

const Step kStep{kId, launch, nullptr, /*tunable=*/false, workspace_bytes, describe};
LADDER_STEP(kStep);

}  // namespace sgemm::dynamic_tail
