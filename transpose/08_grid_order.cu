// transpose step 08: grid order — a matrix wider than tall is walked down its tile columns, so that
// the blocks on the GPU at one time write whole rows of `out`.
// Blocks start roughly in the order of their index, blockIdx.x fastest, and some hundreds are
// resident at once (2 per SM on an H100: 264). Steps 01-07 put tile columns on x: the resident
// blocks cover a band of a few tile rows across the whole width. In `in` that band is contiguous,
// but each row of `out` (one column of `in`) receives only the band's few pieces of it. For a short,
// wide matrix, 1025 x 32769 say, the band is one tile row of 257 tiles: 33,000 rows of `out`, 256
// bytes each, 4 KB apart — every piece opens a DRAM page of its own — and the last tile row, 1 to
// 16 floats per row of `out` (a ragged bottom edge), writes 33,000 partial sectors, each merged
// with the sector read back from DRAM (ECC), all in the last wave. 07 reaches 85% of the copy
// ceiling there, against 90-92% where the tile rows end evenly (1024 or 1088 rows; README).
// Here, when the matrix is wider than tall, tile rows go on x: the resident blocks cover whole tile
// columns, i.e. a run of complete, consecutive rows of `out` (one contiguous range of memory) and a
// band of each row of `in` some KB long; the ragged last tile of each column is written right after
// the tile above it, while its rows of `out` are open. Which side gets the whole rows is the
// choice: with tile rows on x a row of `in` is read in pieces of (resident blocks / tile rows) x
// 512 bytes; with tile columns on x a row of `out` is written in pieces of (resident blocks / tile
// columns) x 256 bytes; the first is longer exactly when cols x 128 > rows x 64 roughly, i.e. for a
// matrix wider than tall (the tile is 64 x 128).
// Changes from step 07: the launcher's grid (tile rows on blockIdx.x when cols > rows); the kernel,
// its tiles and the rule that picks them (07's choose()) are 07's.
// Costs: nothing on the GPU; a matrix taller than wide, or square, runs exactly as in 07.
// Source: beyond the posts; block order for DRAM locality, as in CUTLASS's threadblock swizzles.
// Run: build/bin/transpose_08_grid_order --rows 1025 --cols 32769
#include "transpose/07_sector_aligned.cu"

#include <climits>

namespace transpose::grid_order {

using sector_aligned::kMinBlocksPerSm;
using sector_aligned::kSector;
using sector_aligned::transpose_sector_aligned;

// 07's launcher for one tile and alignment, one tile per block, loads with L2's default policy; the
// grid walks tile columns first (tile rows on x) when the matrix is wider than tall.
template <int kR, int kC, int kAlign>
void launch(const ladder::DeviceInfo&, const float* in, float* out, int64_t rows, int64_t cols,
            cudaStream_t stream) {
  const bool skew =
      rows % kAlign != 0 || reinterpret_cast<uintptr_t>(out) % (kAlign * sizeof(float)) != 0;
  const dim3 block(32, kAlign);
  const int64_t padded_rows = rows + (skew ? kAlign - 1 : 0);
  TileGrid g = tile_grid(padded_rows, cols, kR, kC);
  const int64_t tile_rows = (padded_rows + kR - 1) / kR, tile_cols = (cols + kC - 1) / kC;
  // gridDim.y stops at 65,535 tile columns; past that 07's order it is (tile_grid's).
  if (cols > rows && tile_cols <= 65535 && tile_rows <= INT_MAX)
    g = {dim3(static_cast<unsigned>(tile_rows), static_cast<unsigned>(tile_cols)), true};
  constexpr int kMinBlocks = kMinBlocksPerSm<kR, kC, kAlign>;
  if (skew)
    transpose_sector_aligned<kR, kC, true, kAlign, false, kMinBlocks>
        <<<g.grid, block, 0, stream>>>(in, out, rows, cols, 1, g.rows_on_x);
  else
    transpose_sector_aligned<kR, kC, false, kAlign, false, kMinBlocks>
        <<<g.grid, block, 0, stream>>>(in, out, rows, cols, 1, g.rows_on_x);
  CUDA_CHECK_LAUNCH();
}

// 07's three candidates for its default, in this order of the grid; 07's rule picks one.
const std::vector<Variant> kVariants{
    {"64x128_a16", launch<64, 128, 16>,
     "32 x 16 threads, 64 x 128 tile (+16-row halo) as in 07; tile columns walked first when "
     "cols > rows"},
    {"64x64_a16", launch<64, 64, 16>,
     "32 x 16 threads, 64 x 64 tile (+16-row halo) as in 07; tile columns walked first when "
     "cols > rows"},
    {"64x64", launch<64, 64, kSector>,
     "32 x 8 threads, 64 x 64 tile (+8-row halo) as in 07; tile columns walked first when "
     "cols > rows"},
};

const Step kStep{"transpose/08_grid_order", kVariants.front().launch, kVariants.front().shape,
                 Output::transposed, kVariants, sector_aligned::choose};
LADDER_STEP(kStep);

}  // namespace transpose::grid_order
