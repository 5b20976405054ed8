// sgemm tf32 step 01: the tensor cores through WMMA — the simplest TF32 kernel.
// A block computes a 64 x 64 tile of C with 4 warps; each warp owns a 32 x 32 piece as 2 x 2 WMMA
// accumulator fragments of 16 x 16 (nvcuda::wmma, m16n16k8, precision::tf32, fp32 accumulators).
// Per k step the block stages a 64 x 32 slice of A and a 32 x 64 slice of B in shared memory
// (plain loads, rounded to TF32 with wmma::__float_to_tf32 on the way in, zeros past the edges),
// and every warp runs 4 k8 steps of load_matrix_sync / mma_sync over them. The result goes through
// shared memory (store_matrix_sync) so that the edge tiles write only the elements inside C.
// Changes from the fp32 ladder: the multiply is one wmma::mma_sync per 16 x 16 x 8 piece, 2,048
// multiply-adds (4,096 FLOP) for the warp in four tensor-core instructions (HMMA.1684.F32.TF32 in
// SASS, each 16 x 8 x 4; sm_80 and sm_90, CUDA 13.0), where the fp32 ladder issues 64 warp-wide
// FFMAs (2,048 lane FFMAs); each input loses 13 mantissa bits (the TF32 bound of sgemm.cuh, against
// fp64).
// Costs: WMMA hides the fragment layout, so the kernel cannot choose a shared-memory layout for the
// fragment loads (the padding of 4 floats keeps the rows 16-byte aligned, as load_matrix_sync needs,
// but bank conflicts remain: 67.4 M of its 202 M shared-load wavefronts on the H100, tf32.md), nor
// overlap copies with the MMAs: a block waits at two barriers per k step, and its 4 warps keep few
// tensor-core instructions in flight (the tensor pipe busy 13.1% of the time, same profile).
// Needs sm_80 (TF32 WMMA); elsewhere the step exits 2 naming it.
// Source: CUDA C++ Programming Guide, "Warp Matrix Functions" (sub-byte and alternate floating
// point: precision::tf32, __float_to_tf32). Run: build/bin/sgemm_tf32_01_wmma --m 4096
#include "sgemm/sgemm.cuh"

#include <mma.h>

namespace sgemm::tf32_wmma {

constexpr int BM = 64, BN = 64, BK = 32;  // the block's tile of C and its k step
constexpr int WM = 32, WN = 32;           // a warp's piece of the tile
constexpr int kWarps = (BM / WM) * (BN / WN), kThreads = 32 * kWarps;
constexpr int kFrag = 16, kFragK = 8;     // wmma::m16n16k8 for TF32
// Row pitches of the shared tiles: load_matrix_sync wants a multiple of 4 floats (16 bytes); +4
// shifts each row by 4 banks.
constexpr int AS_LD = BK + 4, BS_LD = BN + 4, CS_LD = BN + 4;
static_assert(WM % kFrag == 0 && WN % kFrag == 0 && BK % kFragK == 0, "whole fragments per warp and k step");
static_assert((BM * BK) % kThreads == 0 && (BK * BN) % kThreads == 0, "every thread copies the same count");
static_assert(AS_LD % 4 == 0 && BS_LD % 4 == 0 && CS_LD % 4 == 0, "WMMA row pitches: multiples of 16 bytes");

__global__ void __launch_bounds__(kThreads)
    sgemm_tf32_wmma(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int64_t m,
                    int64_t n, int64_t k, int64_t tiles_n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // TF32 WMMA needs sm_80; the launcher exits 2 before launching on an older GPU
#else
  using namespace nvcuda;
  __shared__ __align__(32) float As[BM * AS_LD];
  __shared__ __align__(32) float Bs[BK * BS_LD];
  __shared__ __align__(32) float Cs[BM * CS_LD];
  const TileOrigin t = tile_origin(tiles_n, BM, BN);
  const int tid = threadIdx.x, warp = tid / 32;
  const int wm = warp / (BN / WN), wn = warp % (BN / WN);

  wmma::fragment<wmma::accumulator, kFrag, kFrag, kFragK, float> acc[WM / kFrag][WN / kFrag];
#pragma unroll
  for (int i = 0; i < WM / kFrag; ++i)
#pragma unroll
    for (int j = 0; j < WN / kFrag; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  for (int64_t k0 = 0; k0 < k; k0 += BK) {
    // Step 1: the slices of A and B into shared memory, rounded to TF32, zeros past the edges.
    // Consecutive threads take consecutive k (A) and n (B): coalesced loads.
#pragma unroll
    for (int i = 0; i < BM * BK / kThreads; ++i) {
      const int e = tid + i * kThreads, r = e / BK, c = e % BK;
      const int64_t row = t.row + r, col = k0 + c;
      As[r * AS_LD + c] = wmma::__float_to_tf32(row < m && col < k ? A[row * k + col] : 0.0f);
    }
#pragma unroll
    for (int i = 0; i < BK * BN / kThreads; ++i) {
      const int e = tid + i * kThreads, r = e / BN, c = e % BN;
      const int64_t row = k0 + r, col = t.col + c;
      Bs[r * BS_LD + c] = wmma::__float_to_tf32(row < k && col < n ? B[row * n + col] : 0.0f);
    }
    __syncthreads();
    // Step 2: per k8 step, the warp's 2 fragments of A and 2 of B, and their 4 products.
#pragma unroll
    for (int kk = 0; kk < BK; kk += kFragK) {
      wmma::fragment<wmma::matrix_a, kFrag, kFrag, kFragK, wmma::precision::tf32, wmma::row_major> a[WM / kFrag];
      wmma::fragment<wmma::matrix_b, kFrag, kFrag, kFragK, wmma::precision::tf32, wmma::row_major> b[WN / kFrag];
#pragma unroll
      for (int i = 0; i < WM / kFrag; ++i)
        wmma::load_matrix_sync(a[i], As + (wm * WM + i * kFrag) * AS_LD + kk, AS_LD);
#pragma unroll
      for (int j = 0; j < WN / kFrag; ++j)
        wmma::load_matrix_sync(b[j], Bs + kk * BS_LD + wn * WN + j * kFrag, BS_LD);
#pragma unroll
      for (int i = 0; i < WM / kFrag; ++i)
#pragma unroll
        for (int j = 0; j < WN / kFrag; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
  // Step 3: the accumulators through shared memory (their register layout is WMMA's secret), then
  // the tile's elements inside C out, coalesced along n.
#pragma unroll
  for (int i = 0; i < WM / kFrag; ++i)
#pragma unroll
    for (int j = 0; j < WN / kFrag; ++j)
      wmma::store_matrix_sync(Cs + (wm * WM + i * kFrag) * CS_LD + wn * WN + j * kFrag, acc[i][j], CS_LD,
                              wmma::mem_row_major);
  __syncthreads();
  for (int e = tid; e < BM * BN; e += kThreads) {
    const int r = e / BN, c = e % BN;
    const int64_t row = t.row + r, col = t.col + c;
    if (row < m && col < n) C[row * n + col] = Cs[r * CS_LD + c];
  }
#endif
}

void launch(const Gemm& g) {
  const TileGrid grid = tile_grid(g.m, g.n, BM, BN);
  sgemm_tf32_wmma<<<grid.blocks, kThreads, 0, g.stream>>>(g.A, g.B, g.C, g.m, g.n, g.k, grid.tiles_n);
  CUDA_CHECK_LAUNCH();
}

std::string describe(const Gemm&) { return "64x64x32 block tile, 4 warps of 32x32 (fixed)"; }

// Rounded to nearest on the way in (wmma::__float_to_tf32): bounded with u_t = 2^-11.
const Step kStep{"sgemm/tf32_01_wmma", launch, nullptr, false, nullptr, describe, Math::tf32, nullptr,
                 Tf32Input::rounded};
LADDER_STEP(kStep);

}  // namespace sgemm::tf32_wmma
