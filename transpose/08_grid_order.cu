// transpose step 08: grid order — a matrix wider than tall is walked in groups of tile columns, so
// that the blocks on the GPU at one time write whole rows of `out`, and consecutive blocks read
// adjacent pieces of the same rows of `in`.
// Blocks start roughly in the order of their index, blockIdx.x fastest, and some hundreds are
// resident at once (2 per SM on an H100: 264). Steps 01-07 put tile columns on x: the resident
// blocks cover a band of a few tile rows across the whole width. In `in` that band is contiguous,
// but each row of `out` (one column of `in`) receives only the band's few pieces of it. For a short,
// wide matrix, 1025 x 32769 say, the band is one tile row of 257 tiles: 33,000 rows of `out`, 256
// bytes each, 4 KB apart — every piece opens a DRAM page of its own — and the last tile row, 1 to
// 16 floats per row of `out` (a ragged bottom edge), is the last wave alone. 07 reaches 84-88% of
// the copy ceiling there, against 90-92% where the tile rows end evenly (1024 or 1088 rows;
// appendix.md, "Tall, narrow and short, wide matrices").
// Here, when the matrix is wider than tall, the tiles are numbered in groups of G tile columns,
// row by row inside a group (grouped_tile, transpose.cuh), with G = the resident blocks / tile rows
// (at least 1): as many whole tile columns as the resident blocks fill, 15 at 1025 x 32769 on an
// H100. The blocks resident together then cover whole tile columns — complete, consecutive rows of
// `out`, one contiguous range of memory, the ragged last tile of each column written while its
// rows are open — and G consecutive blocks read adjacent 512-byte pieces of the same rows of `in`.
// Where a tile column is more tiles than the GPU holds (G = 1) the grid simply walks down one tile
// column after another.
// Changes from step 07: the launcher's grid when cols > rows (1-D, the kernel's `group` argument);
// the kernel, its tiles and the rule that picks them (07's choose()) are 07's.
// Costs: two 32-bit divisions per block; a matrix taller than wide, or square, runs exactly as in 07.
// Tuning: --variant takes 07's three candidates for its default (64x128_a16, 64x64_a16, 64x64),
// each launched in this grid order; without it 07's rule picks one.
// Source: beyond the posts; block order for DRAM locality, as in CUTLASS's threadblock swizzles.
// Run: build/bin/transpose_08_grid_order --rows 1025 --cols 32769
#include "transpose/07_sector_aligned.cu"

#include <algorithm>
#include <climits>
#include <string>

namespace transpose::grid_order {

using sector_aligned::kMinBlocksPerSm;
using sector_aligned::kSector;
using sector_aligned::transpose_sector_aligned;

// 07's launcher for one tile and alignment, one tile per block, loads with L2's default policy. A
// matrix wider than tall is walked in groups of tile columns (grouped_tile), as many as the
// resident blocks fill whole (at least one); taller than wide, or square, in 07's order.
template <int kR, int kC, int kAlign>
void launch(const ladder::DeviceInfo& dev, const float* in, float* out, int64_t rows, int64_t cols,
            cudaStream_t stream) {
  const bool skew =
      rows % kAlign != 0 || !ladder::aligned_to(out, kAlign * sizeof(float));
  const dim3 block(32, kAlign);
  const int64_t padded_rows = rows + (skew ? kAlign - 1 : 0);
  const int64_t tile_rows = (padded_rows + kR - 1) / kR, tile_cols = (cols + kC - 1) / kC;
  constexpr int kMinBlocks = kMinBlocksPerSm<kR, kC, kAlign>;
  const auto kernel = skew ? transpose_sector_aligned<kR, kC, true, kAlign, false, kMinBlocks>
                           : transpose_sector_aligned<kR, kC, false, kAlign, false, kMinBlocks>;
  // A 1-D grid holds 2^31 - 1 blocks (grouped_tile counts them in 32 bits); past that, 07's grid.
  if (cols > rows && tile_rows * tile_cols <= INT_MAX) {
    const int64_t resident =
        int64_t(ladder::blocks_per_sm(dev, reinterpret_cast<const void*>(kernel), 32 * kAlign, 0)) *
        dev.sm_count;
    const int64_t group = std::clamp<int64_t>(resident / tile_rows, 1, tile_cols);
    kernel<<<dim3(static_cast<unsigned>(tile_rows * tile_cols)), block, 0, stream>>>(
        in, out, rows, cols, 1, false, static_cast<unsigned>(group));
  } else {
    const TileGrid g = tile_grid(padded_rows, cols, kR, kC);
    kernel<<<g.grid, block, 0, stream>>>(in, out, rows, cols, 1, g.rows_on_x, 0);
  }
  CUDA_CHECK_LAUNCH();
}

// 07's three candidates for its default, in this order of the grid; 07's rule picks one.
const std::vector<Variant> kVariants{
    {"64x128_a16", launch<64, 128, 16>,
     "32 x 16 threads, 64 x 128 tile (+16-row halo) as in 07; cols > rows: groups of tile columns, "
     "as many as the resident blocks fill"},
    {"64x64_a16", launch<64, 64, 16>,
     "32 x 16 threads, 64 x 64 tile (+16-row halo) as in 07; cols > rows: groups of tile columns, "
     "as many as the resident blocks fill"},
    {"64x64", launch<64, 64, kSector>,
     "32 x 8 threads, 64 x 64 tile (+8-row halo) as in 07; cols > rows: groups of tile columns, as "
     "many as the resident blocks fill"},
};

// 07's rule for the tile; the record's choice also names how many blocks are resident, which sets
// the group of a matrix wider than tall.
Choice choose(const ladder::DeviceInfo& dev) {
  Choice c = sector_aligned::choose(dev);
  const std::string name = c.name;
  const int per_sm = name == "64x128_a16"  ? sector_aligned::resident_blocks<64, 128, 16>(dev)
                     : name == "64x64_a16" ? sector_aligned::resident_blocks<64, 64, 16>(dev)
                                           : sector_aligned::resident_blocks<64, 64, kSector>(dev);
  c.why += "; cols > rows: groups of " + std::to_string(per_sm * dev.sm_count) +
           " resident blocks / tile rows tile columns";
  return c;
}

const Step kStep{"transpose/08_grid_order", kVariants.front().launch, kVariants.front().shape,
                 Output::transposed, kVariants, choose};
LADDER_STEP(kStep);

}  // namespace transpose::grid_order
