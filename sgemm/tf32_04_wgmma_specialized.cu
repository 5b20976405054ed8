// sgemm tf32 step 04: Hopper, the fast one — no transpose, warp-specialised warpgroups, setmaxnreg,
// a persistent tile loop, 256 x 128 tiles.
// Step 03 pays for TF32's K-major rule with a transpose of B before the GEMM, and its thread 0 both
// copies and multiplies. Here:
//   * the transpose is gone, by swapping the operands' roles. wgmma may take its A operand from
//     registers, and registers can be filled from any shared layout. So each block computes a tile
//     of Cᵀ = Bᵀ·Aᵀ: wgmma's A (64 x 8, registers) is a slice of B, read out of B's N-major tile with
//     4 LDS.32 per thread and k8 step, and wgmma's B (8 x 256, shared memory, K-major) is A's tile as
//     TMA wrote it. The accumulators hold Cᵀ: the epilogue writes them to C transposed.
//     B's tile comes as 4 TMA boxes of 32 k-rows x 32 n (128 bytes, 128-byte swizzle); which n a
//     fragment row stands for is ours to choose, and rows r -> n = 32 box + (r & 3) + 4 (r >> 3 & 1)
//     + 16 (r >> 2 & 1) + 8 (warp & 1), box = 2 consumer + warp / 2 (the B box the warp reads), make
//     the 32 lanes of every LDS hit 32 different banks under the swizzle (the chapter has the
//     derivation);
//   * warp specialisation: warpgroup 0 is the producer (one thread issues every TMA copy, S stages
//     ahead, gated by the `empty` barriers), warpgroups 1 and 2 are consumers, each 64 n x 256 m of
//     the tile with m64n256k8 wgmmas (128 accumulators a thread);
//   * setmaxnreg: the producer drops to 40 registers a thread, the consumers rise to 232 (the block
//     starts capped at 168 by __launch_bounds__(384, 1));
//   * a persistent tile loop: one block per SM walks the tiles so the producer loads the next
//     tile's first stages while the consumers still store this one;
//   * a grouped tile order (sgemm.cuh's grouped_tile_origin): bands of square_band_rows tile rows
//     (8 on the H100), walked column by column, so the tiles in work at one time form a square of C
//     and read half the bytes of A and B per k step that a strip two tile rows high does (the row
//     by row order, `_rows`): 91-92% -> 93-97% of cuBLAS TF32 at 8192^3, no change at 4096^3.
// Measured and not kept (variants for --tile; the chapter's appendix has the numbers):
//   * _c2: clusters of two blocks side by side in n, each loading half of A's tile and multicasting
//     it to both (what cuBLAS's kernel for this shape does): the same time at 8192^3, 2% slower at
//     4096^3. The kernel is not bound by L2 traffic here.
//   * _sk: stream-K for the last partial wave (2,048 tiles on 132 SMs are 15.5 waves): 27% slower
//     at 8192^3, 78% at 4096^3. The split pieces run at different k, so the blocks no longer read
//     the same k slices of A and B at the same time: at 4096^3 L2 hit rate 83% -> 54%, DRAM reads
//     4.4x.
//   * _tail: the last wave's tiles cut into equal k ranges (at 8192^3 the 68 tiles past 15 waves
//     in thirds, two rounds of a third of a tile's time), all parts of a tile running at once: the
//     SMs end together (active 4.15-4.32 M cycles against 4.03-4.30 M), but the pieces run slower
//     (three k positions at once: DRAM reads +11%), and the launch takes as many cycles.
//   * _ov: each consumer's next k8 slice of fragments loaded while two of its own wgmmas run (one
//     wgmma a group, wait_group 2; cuBLAS's kernel does the same): the consumers' short-scoreboard
//     stalls fall from 2.6 to 0.4 per issue, and the launch takes as many cycles (the tensor pipe
//     was already busy 97.5% of the active cycles at 8192^3, the other consumer covering the loads).
//   * _tma: C stored by TMA (32 rows at a time through two 8 KB staging buffers per consumer
//     warpgroup, in the 32 KB four stages leave), so the warps hand the stores to the copy engine
//     instead of issuing 128 4-byte stores a thread: 3.6% slower at 8192^3 in as many cycles (one
//     profiled launch; a lower clock), the same at 4096^3.
// Edges: TMA zero-fills past the matrices in m, n and k; the stores are predicated. TMA needs rows of
// a multiple of 16 bytes: where k % 4 != 0 (A) or n % 4 != 0 (B) that operand is first copied to a
// workspace with a padded pitch (inside the timed region; 4096^3 needs none).
// Changes from step 03: the operand swap (no transpose), producer/consumer warpgroups, setmaxnreg,
// 256 x 128 tiles, persistent blocks in a grouped order, the transposed epilogue.
// Costs: 3 warpgroups (384 threads), S x 48 KB of shared memory (S = 4: 193 KB), one block per SM;
// 16 LDS.32 per consumer thread per k step of 32; stores of 4 bytes (Cᵀ in registers). The stores
// cost 4% of the time at 8192^3 (measured by a build that skipped them): both consumer warpgroups
// store at once, so the tensor cores wait for them (16-byte stores through a per-warp transpose in
// shared memory were slower still, and so was handing them to TMA: _tma above).
// Needs sm_90a (wgmma, setmaxnreg; its add_step line says NEEDS sm_90a); elsewhere the step exits 2
// naming it. Sizes: m, n and k up to 2^31 - 256 (TMA's 32-bit coordinates); past that, exit 2.
// Source: PTX ISA 8.x, "wgmma.mma_async" (register A), "setmaxnreg", "cp.async.bulk.tensor",
// "mbarrier"; the producer/consumer ("warp-specialized persistent") kernel structure described in
// NVIDIA's CUTLASS 3 documentation (efficient_gemm.md) and in the Hopper tuning guide.
// Run: build/bin/sgemm_tf32_04_wgmma_specialized --m 4096
#include "tf32_03_wgmma_tma.cu"  // pad_rows, round_up (and step 03's own registration, unused here)

#include "common/cluster.cuh"

namespace sgemm::tf32_wgmma_specialized {

using tf32_wgmma_tma::pad_rows;
using tf32_wgmma_tma::round_up;

constexpr int TM = 256, TN = 128, BK = 32;  // the block's tile: 256 rows of C (m) x 128 columns (n)
constexpr int kConsumers = TN / 64, THREADS = 128 * (1 + kConsumers);
constexpr int kBBoxes = TN / 32;  // B's tile as boxes of 32 k-rows x 32 n (128 bytes)
constexpr uint32_t kATileBytes = TM * BK * 4, kBBoxBytes = 32 * BK * 4;
constexpr uint32_t kStageBytes = kATileBytes + kBBoxes * kBBoxBytes;
constexpr int kProducerRegs = 40, kConsumerRegs = 232;
static_assert(BK * 4 == 128, "a tile row is one 128-byte swizzle row");
static_assert(kProducerRegs * 128 + kConsumerRegs * 128 * kConsumers <= 65536, "the register file");
// The _tma variant's staging of C: per consumer warpgroup two buffers of 32 rows (m) x 64 columns (n),
// each as two 32 x 32 boxes of the 128-byte swizzle (4 KB): 32 KB in all, beside four stages.
constexpr uint32_t kCBoxBytes = 32 * 32 * 4, kCBufferBytes = 2 * kCBoxBytes;
constexpr uint32_t kCStagingBytes = kConsumers * 2 * kCBufferBytes;

// A thread's 4 fragment offsets (floats) inside a stage's B boxes, for k8 step 0 (+256 per step):
// a[0] (row g, k t), a[1] (row g + 8, k t), a[2] (row g, k t + 4), a[3] (row g + 8, k t + 4). Element
// (k, nn) of a box lives at k * 32 + ((nn / 4) ^ (k % 8)) * 4 + nn % 4 (the 128-byte swizzle).
struct Fragments {
  int off[4];
  int n_lo;  // the n (within the tile) of fragment rows g; rows g + 8 are n_lo + 4
};
__device__ __forceinline__ Fragments fragment_offsets(int consumer, int warp, int lane) {
  const int g = lane / 4, t = lane % 4, box = 2 * consumer + warp / 2;
  const int nn = (g & 3) + 16 * (g >> 2) + 8 * (warp & 1);
  auto at = [&](int k, int n) { return box * 32 * BK + k * 32 + (((n >> 2) ^ (k & 7)) << 2) + (n & 3); };
  return {{at(t, nn), at(t, nn + 4), at(t + 4, nn), at(t + 4, nn + 4)}, 32 * box + nn};
}

// ---- The schedule: which k steps of which tiles a block works on, in order -------------------------
//
// A work unit is one tile (CLUSTER = 1) or a pair of tiles side by side in n (CLUSTER = 2: the two
// blocks of a cluster, each one tile, sharing A's rows). A worker is one block or one cluster; the
// grid holds as many as fit on the GPU at once. Units are numbered in the grouped order.
// Where the units do not divide evenly among the workers (units % workers != 0), the last wave would
// leave workers idle for a whole unit's time (at 8192^3: 2,048 tiles on 132 SMs, 15.5 waves, a
// half-empty 16th). Stream-K (Osama et al., PPoPP 2023; the _sk variant, slower here: the header)
// splits the k steps of the first `sk_units` units (one wave plus the remainder; 0 by default)
// evenly among the workers: each worker's range of
// k steps may start inside one unit and end inside another. A unit split in two is finished by the
// worker that holds its first k steps (that piece comes last in its range): it waits for the other
// piece's partial sums (the first piece of the next worker's range, written to the workspace and
// flagged), adds them and stores C. The rest of the units run whole, `workers` apart.
struct Schedule {
  int64_t units;     // work units in all
  int64_t sk_units;  // the first sk_units units are split by k steps (0: none); else workers <= sk_units < 2 workers
  int64_t ktiles;    // k steps of BK per unit
  int64_t tail;      // the units from `tail` on are split into tail_parts equal k ranges (tail = units: none)
  int64_t tail_parts;
};
struct Work {
  int64_t unit, k_begin, k_end;  // k steps [k_begin, k_end) of unit `unit`
  int64_t part;                  // which of a tail unit's tail_parts ranges (-1: not a tail unit)
};
// The tail split (_tail): where the units leave the last wave partly empty (at 8192^3, 2,048 tiles on
// 132 blocks: 15 whole waves and 68 tiles), the last units are cut into `tail_parts` equal k ranges,
// dealt out in turn after the whole units: the 204 thirds of 68 tiles take 2 rounds of a third of a
// tile's time, so the launch should end after 15 2/3 tiles' time instead of 16. Unlike stream-K, the
// pieces running at one time stand at tail_parts k positions only (each round holds whole units'
// worth of pieces). Measured, it is not faster (the header).
// Calls fn(Work) for each piece of worker `worker`'s work, in order: its stream-K range, piece by
// piece (each to the end of its unit or of the range), then its whole units, then its tail pieces.
// Counted loops, the body inlined in each: one loop that switched between the kinds made ptxas keep
// the k loop's state (stage, phase, descriptors) in per-thread registers instead of uniform ones,
// with more instructions between the wgmmas, and the kernel ran slower (4096^3: 0.357 ms, against
// 0.336-0.349).
template <class Fn>
__device__ __forceinline__ void for_each_work(const Schedule& s, int64_t worker, int64_t workers, Fn&& fn) {
  const int64_t total = s.sk_units * s.ktiles;
  const int64_t begin = worker * total / workers, end = (worker + 1) * total / workers;
  for (int64_t unit = begin / s.ktiles, k = begin % s.ktiles, left = end - begin; left > 0; ++unit, k = 0) {
    const int64_t k_end = min(s.ktiles, k + left);
    fn(Work{unit, k, k_end, -1});
    left -= k_end - k;
  }
  for (int64_t unit = s.sk_units + worker; unit < s.tail; unit += workers) fn(Work{unit, 0, s.ktiles, -1});
  for (int64_t piece = worker; piece < (s.units - s.tail) * s.tail_parts; piece += workers) {
    const int64_t part = piece % s.tail_parts;
    fn(Work{s.tail + piece / s.tail_parts, part * s.ktiles / s.tail_parts, (part + 1) * s.ktiles / s.tail_parts, part});
  }
}

// The workspace of the split units: one slot of 256 consumer threads x 128 partial sums (as float4,
// thread-fastest: coalesced) per block of the grid (stream-K) or per tail piece but the first of its
// unit, and a flag per slot that holds unit + 1 once the slot is written (zeroed before each launch).
constexpr int64_t kSlotFloats = 128 * kConsumers * (TM / 2);

__device__ __forceinline__ void flag_store_release(int* flag, int value) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(flag), "r"(value) : "memory");
}
__device__ __forceinline__ int flag_load_acquire(const int* flag) {
  int value;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(value) : "l"(flag) : "memory");
  return value;
}
// The consumer warpgroups only (threads 128..383), named barrier 1 (0 is __syncthreads').
__device__ __forceinline__ void consumers_sync() {
  asm volatile("bar.sync 1, %0;\n" ::"n"(128 * kConsumers) : "memory");
}
// One consumer warpgroup (128 threads), named barrier 2 + consumer.
__device__ __forceinline__ void warpgroup_sync(int consumer) {
  asm volatile("bar.sync %0, 128;\n" ::"r"(2 + consumer) : "memory");
}

// A consumer waits for each k step's wgmmas (wait_group 0) before it loads the next step's fragments,
// and relies on the other consumer warpgroup to keep the tensor cores busy meanwhile. Overlap = true
// (the _ov variant) keeps its own wgmmas running instead: one wgmma a group, up to two groups in
// flight while the next slice's fragments load. (Built first as two buffers of a whole k step's
// fragments, loaded while the other's four wgmmas ran, it made ptxas 13.0 serialise every wgmma:
// C7513, "non wgmma instructions defining input registers of a wgmma between start and end of the
// pipeline stage"; the slice-by-slice order below compiles to overlapped wgmmas, WARPGROUP.DEPBAR.LE
// gsb0, 0x2, as cuBLAS's kernel does.)
template <int STAGES, bool Overlap, int CLUSTER, bool TmaStore>
__global__ void __launch_bounds__(THREADS, 1)
    sgemm_tf32_wgmma_specialized(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                                 const __grid_constant__ CUtensorMap map_c, float* __restrict__ C, int64_t m, int64_t n,
                                 int64_t k, int64_t tiles_m, int64_t tiles_n, int64_t band_rows, int64_t sk_units,
                                 int64_t tail, int64_t tail_parts, float* __restrict__ partials,
                                 int* __restrict__ flags) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __trap();  // wgmma and setmaxnreg need sm_90a; the launcher exits 2 before launching elsewhere
#else
  extern __shared__ uint8_t smem_raw[];
  __shared__ uint64_t full[STAGES], empty[STAGES];
  // Rounded up to 1024 bytes (the 128-byte swizzle's period) by pointer arithmetic on smem_raw, so the
  // compiler still knows the pointer is shared memory: B's fragments load with LDS (rounding the
  // pointer as an integer left a generic pointer, and generic loads, LD, in the k loop).
  uint8_t* const smem = smem_raw + ((1024 - (ladder::smem_address(smem_raw) & 1023)) & 1023);
  const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32 % 4, lane = tid % 32;
  // CLUSTER = 2: the two blocks of a cluster take the tiles of a unit (the same rows of A): each
  // loads half of A's tile and multicasts it to both.
  const uint32_t rank = CLUSTER > 1 ? ladder::cluster_rank() : 0;
  const int64_t units_n = (tiles_n + CLUSTER - 1) / CLUSTER;
  const Schedule sched{tiles_m * units_n, sk_units, (k + BK - 1) / BK, tail, tail_parts};
  const int64_t worker = blockIdx.x / CLUSTER, workers = gridDim.x / CLUSTER;
  auto tile_of = [&](int64_t unit) {
    const TileOrigin o = grouped_tile_origin(unit, tiles_m, units_n, band_rows, TM, TN * CLUSTER);
    return TileOrigin{o.row, o.col + rank * TN};
  };

  // Step 1: barriers. full: the producer's arrival + the stage's bytes; empty: one arrival per
  // consumer warp of the cluster (a stage of one block is written by both blocks' producers).
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ladder::mbarrier_init(&full[s], 1);
      ladder::mbarrier_init(&empty[s], 4 * kConsumers * CLUSTER);
    }
    ladder::mbarrier_init_fence();
  }
  if constexpr (CLUSTER > 1)
    ladder::cluster_sync();  // the peer's barriers initialised before this block's copies signal them
  else
    __syncthreads();

  if (wg == 0) {
    // Step 2 (producer warpgroup): few registers; one thread walks this block's work and k steps,
    // waiting for each stage to be empty (the first round passes: parity 1 of a fresh barrier) and
    // requesting A's 256 x 32 box (or its half, multicast to the cluster) and B's four 32 x 32 boxes
    // on its full barrier.
    ladder::setmaxnreg_dec<kProducerRegs>();
    if (warp == 0 && lane == 0) {
      int s = 0;
      uint32_t phase = 0;
      for_each_work(sched, worker, workers, [&](const Work& w) {
        const TileOrigin o = tile_of(w.unit);
        const int32_t m0 = static_cast<int32_t>(o.row), n0 = static_cast<int32_t>(o.col);
        for (int64_t kt = w.k_begin; kt < w.k_end; ++kt) {
          ladder::mbarrier_wait(&empty[s], phase ^ 1);
          uint8_t* const stage = smem + s * kStageBytes;
          ladder::mbarrier_arrive_expect_tx(&full[s], kStageBytes);
          const int32_t k0 = static_cast<int32_t>(kt * BK);
          if constexpr (CLUSTER > 1)
            ladder::tma_load_2d_multicast(stage + rank * (kATileBytes / CLUSTER), &map_a, k0,
                                          m0 + static_cast<int32_t>(rank) * (TM / CLUSTER), &full[s],
                                          (1u << CLUSTER) - 1);
          else
            ladder::tma_load_2d(stage, &map_a, k0, m0, &full[s]);
#pragma unroll
          for (int b = 0; b < kBBoxes; ++b)
            ladder::tma_load_2d(stage + kATileBytes + b * kBBoxBytes, &map_b, n0 + 32 * b, k0, &full[s]);
          if (++s == STAGES) {
            s = 0;
            phase ^= 1;
          }
        }
      });
    }
  } else {
    // Step 3 (consumer warpgroups): many registers; per k step, B's fragments from shared memory into
    // registers, then 4 wgmmas m64n256k8 reading A's tile through its descriptor, then the stage
    // released (to both blocks of a cluster).
    ladder::setmaxnreg_inc<kConsumerRegs>();
    const int consumer = wg - 1, ctid = tid - 128;
    const Fragments f = fragment_offsets(consumer, warp, lane);
    int s = 0;
    uint32_t phase = 0;
    float d[TM / 2];
    uint32_t af[BK / 8][4];  // wgmma's A operand: B's fragments for the k step's four k8 slices
    // The fragments of k8 slice kk of a stage into af[kk].
    auto load_fragments = [&](int stage, int kk) {
      const float* const bs = reinterpret_cast<const float*>(smem + stage * kStageBytes + kATileBytes);
#pragma unroll
      for (int q = 0; q < 4; ++q) af[kk][q] = __float_as_uint(bs[f.off[q] + kk * 8 * 32]);
    };
    auto next_stage = [&] {
      if (++s == STAGES) {
        s = 0;
        phase ^= 1;
      }
    };
    // One k step: all four slices' fragments, then their four wgmmas as one group, waited for.
    // Returns the stage it used (the caller releases it).
    auto k_step = [&](bool first) {
      ladder::mbarrier_wait(&full[s], phase);
#pragma unroll
      for (int kk = 0; kk < BK / 8; ++kk) load_fragments(s, kk);
      const uint64_t desc_a = ladder::wgmma_descriptor_k_major_sw128(smem + s * kStageBytes);
      ladder::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 8; ++kk)
        ladder::wgmma_m64n256k8_tf32_rs(d, af[kk], ladder::wgmma_descriptor_advance(desc_a, kk * 32),
                                        kk > 0 || !first);  // scale_d = 0: a new tile starts from A·B
      ladder::wgmma_commit();
      ladder::wgmma_wait<0>();
      const int used = s;
      next_stage();
      return used;
    };
    auto release = [&](int stage) {
      __syncwarp();
      if (lane == 0) {
        if constexpr (CLUSTER > 1) {
#pragma unroll
          for (int r = 0; r < CLUSTER; ++r) ladder::mbarrier_arrive_cluster(&empty[stage], r);
        } else {
          ladder::mbarrier_arrive(&empty[stage]);
        }
      }
    };
    for_each_work(sched, worker, workers, [&](const Work& w) {
      const TileOrigin o = tile_of(w.unit);
      const int64_t m0 = o.row, n0 = o.col;
      if constexpr (Overlap) {
        // _ov: one wgmma a group, and the next slice's fragments loaded while up to two groups run
        // (wait_group 2). The registers slice kk + 1 fills were last read by the wgmma three groups
        // back, which the last wait has retired. A stage is released once its last group is done:
        // after the next stage's second wait.
        ladder::mbarrier_wait(&full[s], phase);
        load_fragments(s, 0);
        int previous = -1;  // the stage before this one, released during this one
        for (int64_t kt = w.k_begin; kt < w.k_end; ++kt) {
          const int stage = s;
          next_stage();
          const uint64_t desc_a = ladder::wgmma_descriptor_k_major_sw128(smem + stage * kStageBytes);
#pragma unroll
          for (int kk = 0; kk < BK / 8; ++kk) {
            if (kk + 1 < BK / 8) {
              load_fragments(stage, kk + 1);
            } else if (kt + 1 < w.k_end) {  // the next stage's first slice
              ladder::mbarrier_wait(&full[s], phase);
              load_fragments(s, 0);
            }
            ladder::wgmma_fence();
            ladder::wgmma_m64n256k8_tf32_rs(d, af[kk], ladder::wgmma_descriptor_advance(desc_a, kk * 32),
                                            kk > 0 || kt > w.k_begin);
            ladder::wgmma_commit();
            ladder::wgmma_wait<2>();
            if (kk == 1 && previous >= 0) release(previous);
          }
          previous = stage;
        }
        ladder::wgmma_wait<0>();
        release(previous);
      } else {
        for (int64_t kt = w.k_begin; kt < w.k_end; ++kt) release(k_step(kt == w.k_begin));  // ends in wait_group 0
      }

      // Step 4 (split units only): a piece that does not finish its unit leaves its partial sums in a
      // slot and flags it; the piece that finishes the unit waits for each such slot and adds it.
      //   tail pieces: parts 1, 2, ... leave theirs in their own slots; part 0 adds them (all the
      //   parts of a unit run in the same round, at the same time);
      //   stream-K (_sk): the piece without the first k steps leaves its sums in this block's slot;
      //   the piece with them adds the next worker's slot (that piece was the first of the next
      //   worker's range: it is there or nearly).
      // Every thread acquires the flag itself, and a warp leaves the waiting loop as one
      // (__all_sync): a loop that threads may leave at different times would make ptxas keep the k
      // loop's state in per-thread registers, not uniform ones.
      auto leave_partials = [&](int64_t slot) {
        float4* const part = reinterpret_cast<float4*>(partials + slot * kSlotFloats) + ctid;
#pragma unroll
        for (int i = 0; i < TM / 8; ++i)
          __stcg(part + i * 128 * kConsumers, make_float4(d[4 * i], d[4 * i + 1], d[4 * i + 2], d[4 * i + 3]));
        __threadfence();
        consumers_sync();
        if (ctid == 0) flag_store_release(flags + slot, static_cast<int>(w.unit + 1));
      };
      auto add_partials = [&](int64_t slot) {
        while (!__all_sync(~0u, flag_load_acquire(flags + slot) == static_cast<int>(w.unit + 1))) __nanosleep(64);
        const float4* const part = reinterpret_cast<const float4*>(partials + slot * kSlotFloats) + ctid;
#pragma unroll
        for (int i = 0; i < TM / 8; ++i) {
          const float4 v = __ldcg(part + i * 128 * kConsumers);
          d[4 * i] += v.x;
          d[4 * i + 1] += v.y;
          d[4 * i + 2] += v.z;
          d[4 * i + 3] += v.w;
        }
      };
      // The tail's slots follow stream-K's (one per block where there is stream-K): parts 1.. of
      // each tail unit in turn.
      auto tail_slot = [&](int64_t part) {
        return (sched.sk_units ? int64_t(gridDim.x) : 0) + (w.unit - sched.tail) * (sched.tail_parts - 1) + part - 1;
      };
      if (w.part > 0) {
        leave_partials(tail_slot(w.part));
        return;
      }
      if (w.part == 0) {
        for (int64_t q = 1; q < sched.tail_parts; ++q) add_partials(tail_slot(q));
      } else if (w.k_begin > 0) {
        leave_partials(blockIdx.x);
        return;
      } else if (w.k_end < sched.ktiles) {
        add_partials(blockIdx.x + CLUSTER);  // the next worker's same-rank block
      }

      // Step 5: the accumulators hold Cᵀ: row 16 w + g of the wgmma is n = n_lo, row 16 w + g + 8 is
      // n_lo + 4; column 8 j + 2 t (+ 1) is m.
      const int t4 = lane % 4;
      if constexpr (TmaStore) {
        // _tma: 32 rows at a time into a staging buffer (two swizzled 32 x 32 boxes of this
        // warpgroup's 64 columns), then one thread hands both boxes to the copy engine, which writes
        // them to C (clipped at C's edges) while the warps go on: to the next rows, then the next
        // tile's k steps. Two buffers per warpgroup: before the barrier that publishes a buffer,
        // the issuing thread waits until the previous buffer's stores have read it, so the next
        // rows may overwrite it. Element (r, c) of a box sits at r * 128 + ((c / 4) ^ (r % 8)) * 16
        // + (c % 4) * 4 bytes; a thread's rows are 2 t4 (+ 1) mod 8.
        uint8_t* const buffers = smem + STAGES * kStageBytes + consumer * 2 * kCBufferBytes;
        uint8_t* const my_box = buffers + warp / 2 * kCBoxBytes;  // this warp's 32 columns
        const int nn = f.n_lo % 32;                                // its column inside the box
        auto at = [&](int e, int h) {  // row 2 t4 + e, column nn + 4 h
          return (2 * t4 + e) * 128 + ((((nn >> 2) + h) ^ (2 * t4 + e)) << 4) + (nn & 3) * 4;
        };
        const int off[2][2] = {{at(0, 0), at(0, 1)}, {at(1, 0), at(1, 1)}};
        const bool issuer = ctid % 128 == 0;
#pragma unroll
        for (int round = 0; round < TM / 32; ++round) {
          const uint32_t buffer = (round & 1) * kCBufferBytes;
#pragma unroll
          for (int jj = 0; jj < 4; ++jj)  // rows 8 jj + 2 t4 (+ 1) of the round: accumulators j
#pragma unroll
            for (int e = 0; e < 2; ++e)
#pragma unroll
              for (int h = 0; h < 2; ++h)
                *reinterpret_cast<float*>(my_box + buffer + jj * 1024 + off[e][h]) =
                    d[4 * (4 * round + jj) + 2 * h + e];
          ladder::fence_proxy_async_shared();
          if (issuer) ladder::tma_store_wait_read<0>();  // the other buffer's stores have read it
          warpgroup_sync(consumer);
          if (issuer) {
#pragma unroll
            for (int b = 0; b < 2; ++b)
              ladder::tma_store_2d(&map_c, static_cast<int32_t>(n0 + 64 * consumer + 32 * b),
                                   static_cast<int32_t>(m0 + 32 * round), buffers + buffer + b * kCBoxBytes);
            ladder::tma_store_commit();
          }
        }
        return;
      }
      // Predicated 4-byte stores.
      const int64_t col_lo = n0 + f.n_lo, col_hi = col_lo + 4;
#pragma unroll
      for (int j = 0; j < TM / 8; ++j) {
        const int64_t row = m0 + 8 * j + 2 * t4;
        if (row < m) {
          if (col_lo < n) C[row * n + col_lo] = d[4 * j];
          if (col_hi < n) C[row * n + col_hi] = d[4 * j + 2];
        }
        if (row + 1 < m) {
          if (col_lo < n) C[(row + 1) * n + col_lo] = d[4 * j + 1];
          if (col_hi < n) C[(row + 1) * n + col_hi] = d[4 * j + 3];
        }
      }
    });
  }
  // A block's shared memory must outlive the peer's last arrivals on its barriers, and the copy
  // engine's last reads of the staging buffers.
  if constexpr (CLUSTER > 1) ladder::cluster_sync();
  if constexpr (TmaStore)
    if (wg > 0 && (tid - 128) % 128 == 0) ladder::tma_store_wait<0>();
#endif
}

// ---- The host side ---------------------------------------------------------------------------------

// The kernel's launch: a cluster of CLUSTER blocks where CLUSTER > 1 (cudaLaunchKernelEx with the
// cluster attribute; the kernel has no compile-time cluster size).
struct Launch {
  const CUtensorMap *map_a, *map_b, *map_c;
  unsigned blocks;
  int64_t tiles_m, tiles_n, band_rows, sk_units, tail, tail_parts;
  size_t smem;
  float* partials;
  int* flags;
};
template <int STAGES, bool Overlap, int CLUSTER, bool TmaStore>
void launch_kernel(const Gemm& g, const Launch& l) {
  cudaLaunchAttribute cluster = ladder::cluster_dimension(CLUSTER);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(l.blocks);
  config.blockDim = dim3(THREADS);
  config.dynamicSmemBytes = l.smem;
  config.stream = g.stream;
  config.attrs = &cluster;
  config.numAttrs = CLUSTER > 1 ? 1 : 0;
  CUDA_CHECK(cudaLaunchKernelEx(&config, sgemm_tf32_wgmma_specialized<STAGES, Overlap, CLUSTER, TmaStore>, *l.map_a,
                                *l.map_b, *l.map_c, g.C, g.m, g.n, g.k, l.tiles_m, l.tiles_n, l.band_rows,
                                l.sk_units, l.tail, l.tail_parts, l.partials, l.flags));
  CUDA_CHECK_LAUNCH();
}

struct Kernel {
  const void* fn;
  void (*launch)(const Gemm&, const Launch&);
};
template <int STAGES, int CLUSTER, bool TmaStore = false, bool Overlap = false>
constexpr Kernel kernel_of() {
  return {reinterpret_cast<const void*>(sgemm_tf32_wgmma_specialized<STAGES, Overlap, CLUSTER, TmaStore>),
          launch_kernel<STAGES, Overlap, CLUSTER, TmaStore>};
}

struct Candidate {
  const char* name;
  int stages;
  int band_rows;  // 0: square_band_rows (the default order); 1: row by row; else that many tile rows per band
  bool clusters;  // pairs of blocks share A's tile where the tile columns pair up (else one block a unit)
  bool stream_k;  // the units that do not fill a whole wave split by k steps
  bool tail;      // the last wave's units cut into equal k ranges where that ends the launch sooner
  bool variant;   // for comparison only: runs when asked for by name (--tile)
  Kernel single, pair;  // the kernel without and with clusters of two
  Kernel tma;           // the kernel storing C through the copy engine (_tma; fn null where none)
};
template <int STAGES>
constexpr Candidate candidate(const char* name, bool clusters, bool stream_k, int band_rows = 0, bool variant = false,
                              bool tail = false) {
  return {name, STAGES, band_rows, clusters, stream_k, tail, variant,
          kernel_of<STAGES, 1>(), kernel_of<STAGES, 2>(), {}};
}
template <int STAGES>
constexpr Candidate overlap_candidate(const char* name) {  // no clusters: `pair` is never launched
  return {name, STAGES, 0, false, false, false, true, kernel_of<STAGES, 1, false, true>(),
          kernel_of<STAGES, 1, false, true>(), {}};
}
template <int STAGES>
constexpr Candidate tma_store_candidate(const char* name) {
  return {name, STAGES, 0, false, false, false, true, kernel_of<STAGES, 1>(), kernel_of<STAGES, 2>(),
          kernel_of<STAGES, 1, true>()};
}

// Deepest first: the default is the deepest ring that fits the GPU's shared memory per block, one
// block a tile, every tile whole. For comparison (never picked by the rule; the chapter has their
// numbers): clusters of two blocks sharing A's tile (_c2), stream-K for the last wave (_sk), the
// last wave's tiles cut in k where that ends the launch sooner by the count of tiles' times (_tail,
// tail_parts_of), the default kernel walking the tiles row by row (_rows) or in bands of 4 or 16
// tile rows (_g4, _g16), C stored by TMA (_tma; where n % 4 != 0 it runs the default's stores), and
// each consumer's wgmmas overlapped with its own fragment loads (_ov).
const Candidate kCandidates[] = {
    candidate<4>("256x128x32_s4", false, false),
    candidate<3>("256x128x32_s3", false, false),
    candidate<2>("256x128x32_s2", false, false),
    candidate<4>("256x128x32_s4_c2", true, false, 0, true),
    candidate<4>("256x128x32_s4_sk", false, true, 0, true),
    candidate<4>("256x128x32_s4_tail", false, false, 0, true, true),
    candidate<4>("256x128x32_s4_rows", false, false, 1, true),
    candidate<4>("256x128x32_s4_g4", false, false, 4, true),
    candidate<4>("256x128x32_s4_g16", false, false, 16, true),
    tma_store_candidate<4>("256x128x32_s4_tma"),
    overlap_candidate<4>("256x128x32_s4_ov"),
};
constexpr const char* kId = "sgemm/tf32_04_wgmma_specialized";

size_t smem_of(const Candidate& c) {
  return size_t(c.stages) * kStageBytes + 1024 + (c.tma.fn ? kCStagingBytes : 0);
}

struct Pick {
  const Candidate* c;
  Kernel kernel;
  int cluster;        // blocks per unit
  unsigned blocks;    // persistent blocks: a whole number of workers, at most the units' worth
  int64_t tiles_m, tiles_n;
  int64_t band_rows;  // tile rows per band of the tile order
  int64_t sk_units;   // units split by k steps (0: none)
  int64_t tail;       // the first unit of the tail split (units: none)
  int64_t tail_parts;  // k ranges per tail unit
  bool tma_store;     // C stored through the copy engine (needs rows of C a multiple of 16 bytes)
  std::string why;
};

Pick pick(const Gemm& g) {
  const TileGrid grid = tile_grid(g.m, g.n, TM, TN);
  const int64_t tiles_m = grid.blocks / grid.tiles_n;
  for (const Candidate& c : kCandidates) {
    if (!g.tile.empty() && g.tile != c.name) continue;
    if (c.variant && g.tile.empty()) continue;
    if (smem_of(c) > g.dev->smem_per_block_optin) continue;
    const bool tma_store = c.tma.fn && g.n % 4 == 0;
    const int per_sm = ladder::blocks_per_sm(*g.dev, tma_store ? c.tma.fn : c.single.fn, THREADS, smem_of(c));
    if (per_sm == 0) continue;
    // Clusters of two where the tile columns pair up and two blocks fit together on a GPC.
    const int64_t clusters = c.clusters && grid.tiles_n % 2 == 0
                                 ? ladder::resident_clusters(*g.dev, c.pair.fn, THREADS, smem_of(c), 2)
                                 : 0;
    const int cluster = clusters > 0 ? 2 : 1;
    const int64_t workers_max = cluster == 2 ? clusters : int64_t(g.dev->sm_count) * per_sm;
    const int64_t units = tiles_m * (grid.tiles_n / cluster);
    const int64_t workers = std::min(units, workers_max);
    // Stream-K over one wave plus the remainder, where there is a remainder and a whole wave before it.
    const int64_t sk_units = c.stream_k && units > workers && units % workers ? workers + units % workers : 0;
    const int64_t tail_parts = c.tail ? tail_parts_of(units, workers, (g.k + BK - 1) / BK) : 1;
    const int64_t tail = tail_parts > 1 ? units - units % workers : units;
    const unsigned blocks = static_cast<unsigned>(workers * cluster);
    const int64_t band = c.band_rows ? std::min<int64_t>(c.band_rows, tiles_m)
                                     : square_band_rows(workers, tiles_m, TM, TN * cluster);
    std::string why = std::string(c.name) + (g.tile.empty() ? ": the deepest ring that fits " : " (--tile); fits ") +
                      std::to_string(g.dev->smem_per_block_optin / 1024) + " KB per block; persistent, " +
                      (cluster == 2 ? std::to_string(workers) + " clusters of 2 blocks sharing A's tile"
                                    : std::to_string(workers) + " blocks") +
                      "; bands of " + std::to_string(band) + " tile rows";
    if (sk_units) why += "; stream-K over the first " + std::to_string(sk_units) + " of " + std::to_string(units) + (cluster == 2 ? " tile pairs" : " tiles");
    if (tail_parts > 1)
      why += "; the last " + std::to_string(units - tail) + " of " + std::to_string(units) + " tiles cut in " +
             std::to_string(tail_parts) + " k ranges";
    if (c.tma.fn) why += tma_store ? "; C stored by TMA from 32 KB of staging" : "; n % 4 != 0: C stored by threads";
    const Kernel kernel = tma_store ? c.tma : cluster == 2 ? c.pair : c.single;
    return {&c, kernel, cluster, blocks, tiles_m, grid.tiles_n, band, sk_units, tail, tail_parts, tma_store, why};
  }
  if (!g.tile.empty()) {  // a known name (an unknown one exits 2 here) whose ring does not fit
    const Candidate& c = pick_candidate(kId, g.tile, kCandidates, kCandidates[0].name);
    ladder::refuse_shared_memory(std::string(kId) + " --tile " + g.tile, smem_of(c), *g.dev);
  }
  ladder::refuse_shared_memory(std::string(kId) + " (its smallest ring, " + kCandidates[2].name + ")",
                               smem_of(kCandidates[2]), *g.dev);
}

// The workspace: A and/or B re-pitched to a multiple of 16 bytes where TMA cannot read them in place,
// then the slots of partial sums (stream-K's, one a block; the tail's, one for each piece but the
// first of a unit) and their flags.
struct Workspace {
  int64_t kp, np, a_floats, b_floats, partial_floats, flag_ints;
};
Workspace workspace_of(const Gemm& g, const Pick& p) {
  const int64_t kp = round_up(g.k, 4), np = round_up(g.n, 4);
  const int64_t tail_units = p.tiles_m * (p.tiles_n / p.cluster) - p.tail;
  const int64_t slots = (p.sk_units ? int64_t(p.blocks) : 0) + tail_units * (p.tail_parts - 1);
  return {kp, np, g.k % 4 ? round_up(g.m * kp, 64) : 0, g.n % 4 ? round_up(g.k * np, 64) : 0, slots * kSlotFloats,
          round_up(slots, 64)};
}

size_t workspace_bytes(const Gemm& g) {
  const Workspace w = workspace_of(g, pick(g));
  return static_cast<size_t>(w.a_floats + w.b_floats + w.partial_floats) * sizeof(float) +
         static_cast<size_t>(w.flag_ints) * sizeof(int);
}

void launch(const Gemm& g) {
  if (!g.tile.empty()) pick_candidate(kId, g.tile, kCandidates, kCandidates[0].name);  // unknown: exit 2
  const Pick p = pick(g);
  const Workspace w = workspace_of(g, p);
  float* const ap = w.a_floats ? static_cast<float*>(g.workspace) : nullptr;
  float* const bp = w.b_floats ? static_cast<float*>(g.workspace) + w.a_floats : nullptr;
  float* const partials = w.partial_floats ? static_cast<float*>(g.workspace) + w.a_floats + w.b_floats : nullptr;
  int* const flags = w.flag_ints ? reinterpret_cast<int*>(partials + w.partial_floats) : nullptr;
  // Step 1: only where a row pitch is not a multiple of 16 bytes: that operand re-pitched. Only where
  // units are split: the flags cleared.
  if (ap) {
    pad_rows<<<ladder::resident_blocks(*g.dev, 256), 256, 0, g.stream>>>(g.A, ap, g.m, g.k, w.kp);
    CUDA_CHECK_LAUNCH();
  }
  if (bp) {
    pad_rows<<<ladder::resident_blocks(*g.dev, 256), 256, 0, g.stream>>>(g.B, bp, g.k, g.n, w.np);
    CUDA_CHECK_LAUNCH();
  }
  if (flags) CUDA_CHECK(cudaMemsetAsync(flags, 0, static_cast<size_t>(w.flag_ints) * sizeof(int), g.stream));
  // Step 2: A seen as 256 x 32 boxes (K-major, wgmma's shared operand; 128 x 32 for a cluster, each
  // block loading half), B as 32 x 32 boxes (N-major, read into registers); both 128-byte swizzled.
  const CUtensorMap map_a = ladder::make_tensor_map_2d(ap ? ap : g.A, g.m, g.k, ap ? w.kp : g.k, TM / p.cluster, BK,
                                                       CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap map_b = ladder::make_tensor_map_2d(bp ? bp : g.B, g.k, g.n, bp ? w.np : g.n, BK, 32,
                                                       CU_TENSOR_MAP_SWIZZLE_128B);
  // C seen as 32 x 32 boxes (the _tma variant's stores; the other kernels ignore the map).
  const CUtensorMap map_c =
      p.tma_store ? ladder::make_tensor_map_2d(g.C, g.m, g.n, g.n, 32, 32, CU_TENSOR_MAP_SWIZZLE_128B) : map_a;
  const size_t smem = smem_of(*p.c);
  ladder::require_shared_memory(p.kernel.fn, smem, *g.dev, std::string(kId) + " " + p.c->name);
  p.kernel.launch(g, {&map_a, &map_b, &map_c, p.blocks, p.tiles_m, p.tiles_n, p.band_rows, p.sk_units, p.tail,
                      p.tail_parts, smem, partials, flags});
}

std::string describe(const Gemm& g) { return pick(g).why; }

void require_size(const Gemm& g) { tf32_wgmma_tma::require_tma_sides(kId, g); }

const Step kStep{kId, launch, nullptr, /*tunable=*/true, workspace_bytes, describe, Math::tf32, require_size};
LADDER_STEP(kStep);

}  // namespace sgemm::tf32_wgmma_specialized
