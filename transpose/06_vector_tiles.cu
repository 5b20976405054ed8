// transpose step 06: 64 x 64 tiles moved as float4 rows, through a conflict-free shuffled tile.
// Step 05 moves 128-byte row pieces with 4-byte accesses: 4 loads of 4 bytes in flight per thread.
// Here a block of 32 x 8 threads moves a 64 x 64 tile, and every global access is a 16-byte float4:
// a warp reads two 256-byte row pieces of `in` per instruction and writes two 256-byte row pieces
// of `out`. Each thread issues 4 float4 loads (16 elements, 64 bytes) before its first shared
// store: 4x the bytes in flight of step 05 for the same 256 threads, and a quarter of the load and
// store instructions and address computations.
// Shared memory: a float4 of `in` holds 4 consecutive columns; the write half needs 4 consecutive
// rows of one column. Stored plainly (tile[r][c], 65-word rows), a warp's 32 scalar shared
// accesses would fall in only 16 banks on both sides: 2-way conflicts. Instead the tile is
// de-interleaved on both axes: element (r, c) lives at tile[slot(r)][slot(c)] with
// slot(i) = (i % 4) * 16 + i / 4. Then the 32 scalar shared stores of a warp (two tile rows, 16
// columns each) and its 32 scalar shared loads (two tile columns, 16 rows each) land in 32
// different banks (the README works it out).
// Changes from step 05: 64 x 64 tiles instead of 32 x 32, float4 global accesses with the streaming
// hint (__ldcs/__stcs, evict-first: every byte is touched once), the shuffled shared layout, 16
// elements per thread, and one 64-bit base address per thread and side.
// Costs: rows and cols must be multiples of 4 (and the matrices 16-byte aligned) for the float4
// path; otherwise the same kernel runs with float2 (multiples of 2) or plain floats, so every size
// stays correct, only slower. Tiles that cross the matrix edge take a bounds-checked scalar path.
// 16.6 KB of shared memory per block.
// Source: beyond the posts; the tile of "CUDA编程入门" (使用SharedMemory优化矩阵转置) with the padding
// of "CUDA实践指南(十八)", grown and vectorized. Run: build/bin/transpose_06_vector_tiles
#include "transpose/transpose.cuh"

#include <cstdint>

namespace transpose::vector_tiles {

constexpr int kTile = 64;       // tile side: a warp's float4 row piece of `in` / `out` is 256 bytes
constexpr int kBlockRows = 8;   // 32 x 8 = 256 threads (the float4 kernel: 36 registers, 6 blocks per SM on an H100)
constexpr int kThreads = 32 * kBlockRows;
static_assert(kTile * kTile % kThreads == 0, "every thread moves the same number of elements");
static_assert(kTile % 32 == 0, "a tile row is a whole number of 32-element pieces");
static_assert((kTile + 1) % 32 == 1, "padded row stride 1 mod 32: a step of one slot row is one bank");

template <int kTileSide, int kRows, int kVec>
__global__ void __launch_bounds__(32 * kRows)
transpose_vector_tiles(const float* __restrict__ in, float* __restrict__ out, int64_t rows,
                       int64_t cols, bool rows_on_x) {
  constexpr int kBlockThreads = 32 * kRows;
  constexpr int kGroups = kTileSide / kVec;               // vectors per tile row
  constexpr int kRowsPerPass = kBlockThreads / kGroups;   // tile rows the block covers per pass
  constexpr int kPasses = kTileSide / kRowsPerPass;       // vector accesses per thread and side
  static_assert(kBlockThreads % kGroups == 0 && kTileSide % kRowsPerPass == 0, "whole passes");
  static_assert(kGroups <= 32 ? 32 % kGroups == 0 : kGroups % 32 == 0,
                "a warp covers whole tile rows or whole 32-vector pieces of one");

  // slot(i): where row/column i of the tile lives. Elements i, i+1, ..., i+kVec-1 of one vector go
  // kGroups slots apart, so a warp's scalar shared accesses on either side hit distinct banks.
  auto slot = [](int i) { return (i % kVec) * kGroups + i / kVec; };
  __shared__ float tile[kTileSide][kTileSide + 1];

  const BlockTile t = block_tile(rows_on_x);
  const int64_t r0 = t.row * kTileSide, c0 = t.col * kTileSide;
  const int l = threadIdx.y * 32 + threadIdx.x;

  if (r0 + kTileSide <= rows && c0 + kTileSide <= cols) {
    // A whole tile: vector accesses, no bounds checks.
    const int g = l % kGroups, pr = l / kGroups;  // this thread's vector column and first tile row

    // Step 1: kPasses vector loads of `in`, all issued before the first use.
    const float* src = in + (r0 + pr) * cols + c0 + g * kVec;
    float v[kPasses][kVec];
#pragma unroll
    for (int p = 0; p < kPasses; ++p)
      load_vec<kVec, /*kStream=*/true>(src + p * kRowsPerPass * cols, v[p]);

    // Step 2: into the shuffled tile. Element j of the vector is column g*kVec + j, slot j*kGroups + g.
#pragma unroll
    for (int p = 0; p < kPasses; ++p)
#pragma unroll
      for (int j = 0; j < kVec; ++j) tile[slot(pr + p * kRowsPerPass)][j * kGroups + g] = v[p][j];
    __syncthreads();

    // Step 3: rows of `out`. Out row c0 + c, columns r0 + g*kVec .. + kVec-1 = tile rows g*kVec + j,
    // which live in slot rows j*kGroups + g.
    float* dst = out + (c0 + pr) * rows + r0 + g * kVec;
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
      const int c = slot(pr + p * kRowsPerPass);
      float w[kVec];
#pragma unroll
      for (int j = 0; j < kVec; ++j) w[j] = tile[j * kGroups + g][c];
      store_vec<kVec>(dst + p * kRowsPerPass * rows, w);
    }
  } else {
    // A tile across the matrix edge: one element per access, each bounds-checked.
    for (int e = l; e < kTileSide * kTileSide; e += kBlockThreads) {
      const int r = e / kTileSide, c = e % kTileSide;
      if (r0 + r < rows && c0 + c < cols) tile[slot(r)][slot(c)] = in[(r0 + r) * cols + c0 + c];
    }
    __syncthreads();
    for (int e = l; e < kTileSide * kTileSide; e += kBlockThreads) {
      const int c = e / kTileSide, r = e % kTileSide;
      if (c0 + c < cols && r0 + r < rows) out[(c0 + c) * rows + r0 + r] = tile[slot(r)][slot(c)];
    }
  }
}

void launch(const ladder::DeviceInfo&, const float* in, float* out, int64_t rows, int64_t cols,
            cudaStream_t stream) {
  const TileGrid g = tile_grid(rows, cols, kTile, kTile);
  const dim3 block(32, kBlockRows);
  // The widest access every row start allows: a row of `in` starts at r*cols, a row of `out` at c*rows.
  if (rows % 4 == 0 && cols % 4 == 0 && ladder::aligned16(in) && ladder::aligned16(out))
    transpose_vector_tiles<kTile, kBlockRows, 4><<<g.grid, block, 0, stream>>>(in, out, rows, cols, g.rows_on_x);
  else if (rows % 2 == 0 && cols % 2 == 0 && ladder::aligned_to(in, 8) && ladder::aligned_to(out, 8))
    transpose_vector_tiles<kTile, kBlockRows, 2><<<g.grid, block, 0, stream>>>(in, out, rows, cols, g.rows_on_x);
  else
    transpose_vector_tiles<kTile, kBlockRows, 1><<<g.grid, block, 0, stream>>>(in, out, rows, cols, g.rows_on_x);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"transpose/06_vector_tiles", launch,
                 "32 x 8 threads, 64 x 64 tile, 16 elements each as float4 (float2/float fallback), "
                 "de-interleaved tile[64][65]"};
LADDER_STEP(kStep);

}  // namespace transpose::vector_tiles
