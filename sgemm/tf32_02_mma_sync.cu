// sgemm tf32 step 02: mma.sync m16n8k8 TF32 with ldmatrix, a swizzled A tile, a padded B tile,
// register double buffering and a cp.async pipeline.
// Step 01 lets WMMA pick the fragments' layout and loads; here every instruction is ours
// (common/mma.cuh). A block of 4 warps computes a 128 x 128 tile of C (8 warps on 128 x 256 where
// two blocks do not fit an SM), each warp a 64 x 64 piece as 4 x 8 mma.sync.m16n8k8 tiles: 128 fp32
// accumulators per thread. Per k step of 32:
//   * copies: a ring of S shared-memory stages filled by cp.async, S - 1 tiles in flight. A block
//     whose tile lies inside A and B copies without tests (each 16-byte copy a 64-bit address add
//     and one LDGSTS); edge blocks take 16-byte copies with zero fill where rows are 16-byte
//     aligned, 4-byte ones otherwise;
//   * A fragments: ldmatrix.x4 (one instruction per 16 x 8 fragment, 4 LDS.32 otherwise) from a
//     tile stored row by row (K-major) whose 16-byte chunks are XOR-swizzled, chunk ^= row % 8: the
//     8 rows one ldmatrix phase reads land in 8 different bank groups (unswizzled, all 8 rows of 128
//     bytes start in bank 0: 8-way conflicts);
//   * B fragments: B is k x n row-major (N-major), and the MMA wants b[0] = B[t][g], b[1] = B[t+4][g]
//     (lanes: g = lane/4 along n, t = lane%4 along k) in two adjacent registers — ldmatrix cannot
//     produce that from 32-bit elements (its transpose moves 16-bit halves). Two LDS.32 per n8 tile
//     load the pair straight into its registers, from a tile padded to BN + 8 floats a row: lanes
//     (g, t) read banks 8 t + g, all 32 different. (Wider loads — an LDS.128 of 4 consecutive n —
//     bring 4 values of one k row into 4 adjacent registers, and the pairs must then be assembled:
//     the first version of this step did that: 281 of its loop's 652 instructions were moves, the
//     chapter shows the SASS);
//   * register double buffering: the fragments of k8 step j+1 are loaded before the MMAs of step j;
//   * the fragments go to the MMA as they are: the tensor core reads the top 19 bits of each fp32
//     (TF32, cut). The _rna candidates round them first (cvt.rna.tf32.f32, round to nearest: half the
//     error, one cvt per fragment register, which ptxas makes two SASS instructions, FSETP and a
//     predicated IMAD.IADD; the chapter measures both).
// Changes from step 01: instruction-level fragments (ldmatrix, LDS.32, mma.sync), the swizzle and
// padding, the pipeline and a 64 x 64 warp tile (2 KB of A and 2 KB of B fragments per 32 MMAs: at
// TF32's 4 bytes an element, a smaller warp tile would run out of shared-memory bandwidth first).
// Costs: ~240 registers per thread (two 128-thread blocks per SM); S x (BM x 32 + 32 x (BN + 8)) x 4
// bytes of shared memory (99 KB at 128 x 128 x 3 stages). Where a row of A or B is not 16-byte
// aligned (k or n not a multiple of 4) the kernel copies that operand 4 bytes at a time with the
// index arithmetic per element, and ptxas spills 20-200 bytes a thread there: correct, not fast.
// Tunable: --tile BMxBNx32[_wWMxWN]_sS[_bB][_rna]; the default is the deepest ring of which two
// blocks fit an SM (the rule below), no rounding. The tile loop is a device function over a range of
// k steps (mma_sync_tile): this step's kernel runs it over all of k, tf32_05's split-K over slices.
// Needs sm_80 (mma.sync TF32, cp.async); elsewhere the step exits 2 naming it.
// Source: PTX ISA, "Warp-level matrix fragments for mma.m16n8k8" (.tf32), "ldmatrix", "cp.async";
// NVIDIA CUTLASS's sm80 multistage mainloop and its XOR-swizzled shared layouts (the idea, no code).
// Run: build/bin/sgemm_tf32_02_mma_sync --m 4096
#include "sgemm/sgemm.cuh"

#include "common/cp_async.cuh"
#include "common/mma.cuh"

#include <iterator>
#include <string>

namespace sgemm::tf32_mma_sync {

constexpr int BK = 32;           // k step: one 128-byte row of A per tile row
constexpr int kChunks = BK / 4;  // 16-byte chunks in a row of the A tile: 8, the swizzle's period
static_assert(kChunks == 8, "the A swizzle XORs a chunk index with row % 8: 8 chunks of 16 bytes a row");

template <int BM_, int BN_, int WM_, int WN_, int Stages_, bool Round_, int MinBlocks_ = 1>
struct Config {
  static constexpr int BM = BM_, BN = BN_, WM = WM_, WN = WN_, STAGES = Stages_;
  static constexpr int MIN_BLOCKS = MinBlocks_;  // __launch_bounds__: ptxas keeps registers for this many blocks/SM
  static constexpr bool ROUND = Round_;  // cvt.rna every fragment to TF32 (else the hardware cuts)
  static constexpr int MI = WM / 16, NI = WN / 8;  // m16n8 MMA tiles per warp
  static constexpr int WARPS_N = BN / WN, THREADS = 32 * (BM / WM) * WARPS_N;
  static constexpr int BS_LD = BN + 8;  // B row pitch, padded by 8 floats: rows t and t + 1 start 8 banks apart
  static constexpr int A_STAGE = BM * BK, B_STAGE = BK * BS_LD;
  static constexpr size_t kSmem = size_t(STAGES) * (A_STAGE + B_STAGE) * sizeof(float);
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 8 == 0, "whole warp and MMA tiles");
  static_assert((BM * kChunks) % THREADS == 0 && (BK * BN / 4) % THREADS == 0, "even copy shares");
  static_assert(STAGES >= 2, "one tile in flight while another is multiplied");
};

// Element (r, c) of the A tile (BM x 32, K-major) lives at r * 32 + ((c / 4) ^ (r % 8)) * 4 + c % 4.
__device__ __forceinline__ int a_swizzled(int r, int chunk) { return r * BK + ((chunk ^ (r & 7)) << 2); }

// One k step's tiles into one stage: A rows row0.. and B columns col0.., k from k0; zeros outside.
// Vec: 16-byte copies (rows 16-byte aligned: k % 4 == 0 for A, n % 4 == 0 for B); else 4-byte ones.
template <class T, bool VecA, bool VecB>
__device__ __forceinline__ void copy_stage(float* As, float* Bs, const float* __restrict__ A,
                                           const float* __restrict__ B, int64_t m, int64_t n, int64_t k,
                                           int64_t row0, int64_t col0, int64_t k0, int tid) {
#pragma unroll
  for (int i = 0; i < T::BM * kChunks / T::THREADS; ++i) {
    const int c = tid + i * T::THREADS, r = c / kChunks, ch = c % kChunks;
    const int64_t row = row0 + r, col = k0 + ch * 4;
    float* dst = As + a_swizzled(r, ch);
    if constexpr (VecA) {
      const bool ok = row < m && col < k;
      ladder::cp_async_16(dst, ok ? A + row * k + col : A, ok);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const bool ok = row < m && col + e < k;
        ladder::cp_async_4(dst + e, ok ? A + row * k + col + e : A, ok);
      }
    }
  }
#pragma unroll
  for (int i = 0; i < BK * T::BN / 4 / T::THREADS; ++i) {
    const int c = tid + i * T::THREADS, r = c / (T::BN / 4), ch = c % (T::BN / 4);
    const int64_t row = k0 + r, col = col0 + ch * 4;
    float* dst = Bs + r * T::BS_LD + ch * 4;
    if constexpr (VecB) {
      const bool ok = row < k && col < n;
      ladder::cp_async_16(dst, ok ? B + row * n + col : B, ok);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const bool ok = row < k && col + e < n;
        ladder::cp_async_4(dst + e, ok ? B + row * n + col + e : B, ok);
      }
    }
  }
}

// The same copies where both operands take 16-byte ones, with the per-thread work done once: a
// thread's chunks of A are A_STEP rows apart (same column, same swizzle) and its chunks of B are
// B_STEP rows apart. A block whose tile lies inside A and B and a k step that lies inside k (all of
// them but the edges) copy without tests: a chunk is one 64-bit address add (its 32-bit byte offset
// from the thread's first chunk: an IMAD.WIDE, or an IADD3 and its carry, as ptxas picks) and one
// LDGSTS (at the default 128 x 128 tile ptxas adds 38 uniform instructions a k step, mostly
// recomputing B's offsets; sm_90, CUDA 13.0). The rest take copy_stage's tests and zero fills.
template <class T>
struct VecCopier {
  static constexpr int A_PER = T::BM * kChunks / T::THREADS, A_STEP = T::THREADS / kChunks;
  static constexpr int B_CPR = T::BN / 4, B_PER = BK * B_CPR / T::THREADS, B_STEP = T::THREADS / B_CPR;
  static_assert(T::THREADS % kChunks == 0 && T::THREADS % B_CPR == 0, "whole rows per pass");
  static_assert(A_STEP % 8 == 0, "every chunk of a thread has the same swizzle");
  const char* a;  // this thread's first A chunk at k = 0 (rows past m: never read)
  const char* b;  // its first B chunk at k = 0
  int64_t a_step, b_step;  // A_STEP rows of A, B_STEP rows of B, in bytes
  int a_soff, b_soff;       // the chunks' places in a stage
  int a_row, a_col, b_row;  // its first chunk's row (A: from row0; B: from k0) and A's column
  int a_rows;               // rows of A left from row0 (at most BM)
  bool b_ok;                // its B column lies inside n
  bool inside;              // the tile lies inside A and B, and a thread's chunk offsets fit 32 bits

  __device__ __forceinline__ VecCopier(const float* A, const float* B, int64_t m, int64_t n, int64_t k,
                                       int64_t row0, int64_t col0, int tid) {
    a_row = tid / kChunks;
    a_col = tid % kChunks * 4;
    b_row = tid / B_CPR;
    const int b_col = tid % B_CPR * 4;
    a_soff = a_swizzled(a_row, tid % kChunks);
    b_soff = b_row * T::BS_LD + b_col;
    a_rows = static_cast<int>(m - row0 < T::BM ? m - row0 : T::BM);
    b_ok = col0 + b_col < n;
    a_step = int64_t(A_STEP) * k * 4;
    b_step = int64_t(B_STEP) * n * 4;
    inside = a_rows == T::BM && col0 + T::BN <= n && (A_PER - 1) * a_step < (int64_t(1) << 32) &&
             (B_PER - 1) * b_step < (int64_t(1) << 32);
    a = reinterpret_cast<const char*>(A + (row0 + a_row) * k + a_col);
    b = reinterpret_cast<const char*>(B + int64_t(b_row) * n + col0 + b_col);
  }

  __device__ __forceinline__ void copy(float* As, float* Bs, const float* A, const float* B, int64_t k,
                                       int64_t n, int64_t k0) const {
    const char* ak = a + k0 * 4;
    const char* bk = b + k0 * n * 4;
    if (inside && k0 + BK <= k) {
#pragma unroll
      for (int i = 0; i < A_PER; ++i)
        ladder::cp_async_16(As + a_soff + i * A_STEP * BK,
                            reinterpret_cast<const float*>(ak + i * static_cast<uint32_t>(a_step)));
#pragma unroll
      for (int i = 0; i < B_PER; ++i)
        ladder::cp_async_16(Bs + b_soff + i * B_STEP * T::BS_LD,
                            reinterpret_cast<const float*>(bk + i * static_cast<uint32_t>(b_step)));
      return;
    }
    const bool a_k_ok = k0 + a_col < k;
#pragma unroll
    for (int i = 0; i < A_PER; ++i) {
      const bool ok = a_k_ok && a_row + i * A_STEP < a_rows;
      ladder::cp_async_16(As + a_soff + i * A_STEP * BK, ok ? reinterpret_cast<const float*>(ak + i * a_step) : A, ok);
    }
#pragma unroll
    for (int i = 0; i < B_PER; ++i) {
      const bool ok = b_ok && k0 + b_row + i * B_STEP < k;
      ladder::cp_async_16(Bs + b_soff + i * B_STEP * T::BS_LD, ok ? reinterpret_cast<const float*>(bk + i * b_step) : B,
                          ok);
    }
  }
};

// The fragments of one k8 step. A: ldmatrix.x4 per 16-row slab. B: the MMA wants the pair
// b[0] = B[t][g], b[1] = B[t + 4][g] (g = lane / 4 along n, t = lane % 4 along k) in two adjacent
// registers; two LDS.32 load them there (rows t and t + 4 of the padded tile: lanes (g, t) hit
// banks 8 t + g + const, all 32 different).
template <class T>
__device__ __forceinline__ void load_fragments(uint32_t (&af)[T::MI][4], uint32_t (&bf)[T::NI][2], const float* as,
                                               const float* bs, int kk, int a_row, int a_hi) {
#pragma unroll
  for (int mi = 0; mi < T::MI; ++mi) {
    const int r = a_row + mi * 16;
    ladder::ldmatrix_x4(af[mi], as + a_swizzled(r, kk * 2 + a_hi));
    if constexpr (T::ROUND) {
#pragma unroll
      for (int q = 0; q < 4; ++q) af[mi][q] = ladder::to_tf32(__uint_as_float(af[mi][q]));
    }
  }
#pragma unroll
  for (int ni = 0; ni < T::NI; ++ni)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float v = bs[(kk * 8 + 4 * r) * T::BS_LD + ni * 8];
      bf[ni][r] = T::ROUND ? ladder::to_tf32(v) : __float_as_uint(v);
    }
}

// One block's tile of C (blockIdx.x, tile_origin's order) over the k steps [kt_begin, kt_end) of
// BK each, into `out` (m x n, pitch n): the whole of k for this step's kernel; a slice of k for a
// split-K kernel (tf32_05), whose blocks each write their partial tile to their own slice of a
// workspace. A and B are the whole operands either way: the copies' edge tests are against m, n, k.
template <class T, bool VecA, bool VecB>
__device__ __forceinline__ void mma_sync_tile(const float* __restrict__ A, const float* __restrict__ B,
                                              float* __restrict__ out, int64_t m, int64_t n, int64_t k,
                                              int64_t tiles_n, int kt_begin, int kt_end) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int MI = T::MI, NI = T::NI;
  extern __shared__ __align__(128) float smem[];
  float* const As = smem;                          // [STAGES][BM][32], swizzled
  float* const Bs = smem + T::STAGES * T::A_STAGE;  // [STAGES][32][BS_LD], padded
  const TileOrigin t = tile_origin(tiles_n, T::BM, T::BN);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / T::WARPS_N, wn = warp % T::WARPS_N;
  const int g = lane / 4, tq = lane % 4;
  // ldmatrix: lanes 8q .. 8q+7 address the rows of matrix q (rows (q & 1) 8 .., k chunk q >> 1).
  const int a_row = wm * T::WM + (lane >> 3 & 1) * 8 + (lane & 7), a_hi = lane >> 4;
  const int b_lane = tq * T::BS_LD + wn * T::WN + g;  // B[t][g] of the warp's first n8 tile
  constexpr int KSTEPS = BK / 8;  // k8 MMA steps per k step
  const VecCopier<T> vc(A, B, m, n, k, t.row, t.col, tid);  // used where VecA && VecB
  auto copy = [&](int s, int64_t k0) {
    if constexpr (VecA && VecB)
      vc.copy(As + s * T::A_STAGE, Bs + s * T::B_STAGE, A, B, k, n, k0);
    else
      copy_stage<T, VecA, VecB>(As + s * T::A_STAGE, Bs + s * T::B_STAGE, A, B, m, n, k, t.row, t.col, k0, tid);
  };

  // Step 1: the prologue: S - 1 tiles requested (a group per tile, empty past the end).
#pragma unroll
  for (int s = 0; s < T::STAGES - 1; ++s) {
    if (kt_begin + s < kt_end) copy(s, int64_t(kt_begin + s) * BK);
    ladder::cp_async_commit();
  }

  float acc[MI][NI][4] = {};
  uint32_t af[2][MI][4], bf[2][NI][2];
  int read_stage = 0, write_stage = T::STAGES - 1;  // the stage multiplied now, the one refilled
  for (int kt = kt_begin; kt < kt_end; ++kt) {
    // Step 2: tile kt has landed (at most S - 2 younger groups in flight) and every warp is done
    // with the stage multiplied at kt - 1, which now takes tile kt + S - 1.
    ladder::cp_async_wait<T::STAGES - 2>();
    __syncthreads();
    if (kt + T::STAGES - 1 < kt_end) copy(write_stage, int64_t(kt + T::STAGES - 1) * BK);
    ladder::cp_async_commit();

    // Step 3: 4 k8 steps of MI x NI MMAs, the fragments of step j + 1 loaded before the MMAs of step j.
    const float* as = As + read_stage * T::A_STAGE;
    const float* bs = Bs + read_stage * T::B_STAGE + b_lane;
    load_fragments<T>(af[0], bf[0], as, bs, 0, a_row, a_hi);
#pragma unroll
    for (int kk = 0; kk < KSTEPS; ++kk) {
      if (kk + 1 < KSTEPS) load_fragments<T>(af[(kk + 1) & 1], bf[(kk + 1) & 1], as, bs, kk + 1, a_row, a_hi);
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni) ladder::mma_m16n8k8_tf32(acc[mi][ni], af[kk & 1][mi], bf[kk & 1][ni]);
    }
    read_stage = read_stage + 1 == T::STAGES ? 0 : read_stage + 1;
    write_stage = write_stage + 1 == T::STAGES ? 0 : write_stage + 1;
  }
  ladder::cp_async_wait<0>();  // no copy outlives the block (the last groups are empty)

  // Step 4: the accumulators to `out`. d[0], d[1] of tile (mi, ni) are row g, columns 2t and 2t + 1 of
  // the n8 tile; d[2], d[3] the same 8 rows down: 8-byte stores where n is even and both columns lie
  // inside C (a warp's store covers 8 rows x 32 bytes: whole sectors), single floats otherwise.
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t row = t.row + wm * T::WM + mi * 16 + g + h * 8;
      if (row >= m) continue;
#pragma unroll
      for (int ni = 0; ni < NI; ++ni) {
        const int64_t col = t.col + wn * T::WN + ni * 8 + 2 * tq;
        float* c = out + row * n + col;
        const float v0 = acc[mi][ni][2 * h], v1 = acc[mi][ni][2 * h + 1];
        if ((n & 1) == 0 && col + 1 < n) {
          *reinterpret_cast<float2*>(c) = make_float2(v0, v1);
        } else {
          if (col < n) c[0] = v0;
          if (col + 1 < n) c[1] = v1;
        }
      }
    }
#endif
}

template <class T, bool VecA, bool VecB>
__global__ void __launch_bounds__(T::THREADS, T::MIN_BLOCKS)
    sgemm_tf32_mma_sync(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                        int64_t m, int64_t n, int64_t k, int64_t tiles_n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // mma.sync TF32 and cp.async need sm_80; the launcher exits 2 before launching
#else
  mma_sync_tile<T, VecA, VecB>(A, B, C, m, n, k, tiles_n, 0, static_cast<int>((k + BK - 1) / BK));
#endif
}

struct Candidate {
  const char* name;
  int bm, bn, threads;
  size_t smem;
  bool in_rule;  // the rule may pick it (not the 256x128, _b2 and _rna comparisons)
  void (*launch)(const Gemm& g, unsigned blocks, int64_t tiles_n);
  const void* kernel;  // one of its kernels (all four have its registers and shared memory): occupancy
};

template <class T>
const void* kernel_of(bool vec_a, bool vec_b) {
  if (vec_a) return vec_b ? reinterpret_cast<const void*>(sgemm_tf32_mma_sync<T, true, true>)
                          : reinterpret_cast<const void*>(sgemm_tf32_mma_sync<T, true, false>);
  return vec_b ? reinterpret_cast<const void*>(sgemm_tf32_mma_sync<T, false, true>)
               : reinterpret_cast<const void*>(sgemm_tf32_mma_sync<T, false, false>);
}

template <class T>
void launch_config(const Gemm& g, unsigned blocks, int64_t tiles_n) {
  const bool vec_a = g.k % 4 == 0, vec_b = g.n % 4 == 0;
  const void* kernel = kernel_of<T>(vec_a, vec_b);
  ladder::require_shared_memory(kernel, T::kSmem, *g.dev, "sgemm tf32_02 " + std::to_string(T::BM) + "x" +
                                                              std::to_string(T::BN) + " tile");
  auto go = [&](auto kern) {
    kern<<<blocks, T::THREADS, T::kSmem, g.stream>>>(g.A, g.B, g.C, g.m, g.n, g.k, tiles_n);
  };
  if (vec_a) {
    if (vec_b) go(sgemm_tf32_mma_sync<T, true, true>);
    else go(sgemm_tf32_mma_sync<T, true, false>);
  } else {
    if (vec_b) go(sgemm_tf32_mma_sync<T, false, true>);
    else go(sgemm_tf32_mma_sync<T, false, false>);
  }
  CUDA_CHECK_LAUNCH();
}

template <int BM, int BN, int WM, int WN, int S, bool Round, int MinBlocks = 1>
Candidate candidate(const char* name) {
  using T = Config<BM, BN, WM, WN, S, Round, MinBlocks>;
  const bool in_rule = !Round && MinBlocks == 1 && BM == 128;
  return {name, BM, BN, T::THREADS, T::kSmem, in_rule, launch_config<T>, kernel_of<T>(true, true)};
}

// The rule (pick below): first the deepest ring of which two blocks fit one SM — while one block
// waits at its barrier for the next stage the other's MMAs keep the tensor pipe busy (on the H100 at
// 4096^3, 128x128x32_s3 at two blocks per SM runs ~20% faster than 128x256x32_s4 at one); where no
// candidate gets two blocks, in order of preference: the large tile (8 warps, 196 KB at 4 stages)
// where its blocks fill at least one wave of the GPU, else the medium one (4 warps; 99 KB at 3
// stages; 66 KB at 2 stages fits every sm_8x/sm_12x part); the deepest ring that fits the GPU's
// shared memory per block. The others are there to be compared: 256x128 (the large tile the other
// way round), _w64x32_b2 (warp tiles of 64 x 32: half the accumulators, 127 registers, so two blocks
// of 8 warps fit an SM — twice the warps, but 1.5x the shared-memory reads per MMA), and the _rna
// twins, which round the fragments (never the default).
const Candidate kCandidates[] = {
    candidate<128, 256, 64, 64, 4, false>("128x256x32_s4"),
    candidate<128, 256, 64, 64, 3, false>("128x256x32_s3"),
    candidate<128, 128, 64, 64, 3, false>("128x128x32_s3"),
    candidate<128, 128, 64, 64, 2, false>("128x128x32_s2"),
    candidate<256, 128, 64, 64, 3, false>("256x128x32_s3"),
    candidate<128, 128, 64, 32, 3, false, 2>("128x128x32_w64x32_s3_b2"),
    candidate<128, 256, 64, 64, 4, true>("128x256x32_s4_rna"),
    candidate<128, 128, 64, 64, 3, true>("128x128x32_s3_rna")};
constexpr const char* kId = "sgemm/tf32_02_mma_sync";

struct Pick {
  const Candidate* c;
  std::string why;
};

Pick pick(const Gemm& g) {
  const ladder::DeviceInfo& dev = *g.dev;
  if (!g.tile.empty()) {
    const Candidate& c = pick_candidate(kId, g.tile, kCandidates, kCandidates[0].name);
    if (c.smem > dev.smem_per_block_optin) ladder::refuse_shared_memory(std::string(kId) + " --tile " + g.tile, c.smem, dev);
    return {&c, g.tile + " (--tile)"};
  }
  for (const Candidate& c : kCandidates) {
    if (!c.in_rule || c.smem > dev.smem_per_block_optin) continue;
    const int per_sm = ladder::blocks_per_sm(dev, c.kernel, c.threads, c.smem);
    if (per_sm >= 2)
      return {&c, std::string(c.name) + ": the deepest ring of which two blocks fit one SM (" +
                      std::to_string(per_sm) + " blocks of " + std::to_string(c.smem / 1024) + " KB here)"};
  }
  for (const Candidate& c : kCandidates) {
    if (!c.in_rule || c.smem > dev.smem_per_block_optin) continue;
    const bool large = c.bn == 256;
    const int64_t tiles = ((g.m + c.bm - 1) / c.bm) * ((g.n + c.bn - 1) / c.bn);
    if (large && tiles < dev.sm_count) continue;  // fewer large tiles than SMs: take more, smaller ones
    return {&c, std::string(c.name) + ": " +
                    (large ? "the large tile fills the GPU (" + std::to_string(tiles) + " tiles >= " +
                                 std::to_string(dev.sm_count) + " SMs); "
                           : std::string()) +
                    "the deepest ring that fits " + std::to_string(dev.smem_per_block_optin / 1024) +
                    " KB per block"};
  }
  ladder::refuse_shared_memory(std::string(kId) + " (its smallest ring, " + kCandidates[3].name + ")",
                               kCandidates[3].smem, dev);
}

void launch(const Gemm& g) {
  if (!g.tile.empty()) pick_candidate(kId, g.tile, kCandidates, kCandidates[0].name);  // unknown: exit 2
  const Candidate& c = *pick(g).c;
  const TileGrid grid = tile_grid(g.m, g.n, c.bm, c.bn);
  c.launch(g, grid.blocks, grid.tiles_n);
}

std::string describe(const Gemm& g) { return pick(g).why; }

const Step kStep{kId, launch, nullptr, /*tunable=*/true, nullptr, describe, Math::tf32};
LADDER_STEP(kStep);

}  // namespace sgemm::tf32_mma_sync
