// separable_conv step 05: the post's padding formula — a row pitch that ends the bank conflicts for
// block widths that are not 32. The kernels are step 04's, unchanged; only the pitch differs.
// Shared memory is 32 banks of 4-byte words; word w is in bank w mod 32. A warp of a 28-wide block
// holds the last 28 - o threads of one block row and the first 4 + o of the next (o = 0, 4, .., 24),
// two runs of consecutive words `pitch` apart. The second run must fill exactly the banks the
// first leaves free, which holds for every warp exactly when pitch = 28 (mod 32), i.e. when
//     WARP_SIZE * n = original_row_size + (WARP_SIZE - blockDim.x) + padding
// for some whole n — the post's formula, with the smallest padding >= 0: row size 44 at K = 17
// becomes 60. For a 32-wide block it rounds the pitch to a multiple of 32 (no conflict either
// way: a warp is then a single block row). The column pass needs none: its tile rows are blockDim.x
// floats apart, so a warp's 32 accesses are 32 consecutive words across two block rows.
// Nsight Compute (H100, 4096 x 4096, K = 17): the row pass's
// l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum / _op_st.sum fall from 8,771,378 /
// 883,852 to 88,066 / 54,475 (not 0, but the level of the column pass, which needs no padding:
// 138,879 / 53,543), shared wavefronts per load / store instruction from 1.96 / 1.82 to 1.01 / 1.05
// (the post: 1.871 / 1.435 -> 1 / 1).
// Changes from step 04: pitch = padded_pitch(28 + K - 1, 28) instead of 28 + K - 1.
// Costs: up to 31 unused floats per block row (16 at K = 17: 1.8 KB per block).
// Source: "separable convolution with CUDA", section 四 (solve the bank conflict).
// Run: build/bin/separable_conv_05_padded
#include "04_shared_tiles.cu"  // row_pass_shared, column_pass_shared, launch_with_pitch

namespace separable_conv::padded {

constexpr int kWarpSize = 32;

// The post's formula: the smallest pitch >= row_size with pitch + (32 - block_x) a multiple of 32.
constexpr int padded_pitch(int row_size, int block_x) {
  const int temp = row_size + (kWarpSize - block_x);
  const int padding = kWarpSize * ((temp + kWarpSize - 1) / kWarpSize) - temp;
  return row_size + padding;
}
static_assert(padded_pitch(28 + 16, 28) == 60, "K = 17 with the post's 28-wide block: 44 -> 60");
static_assert(padded_pitch(28 + 16, 28) % kWarpSize == 28, "pitch = blockDim.x (mod 32): no conflicts");
static_assert(padded_pitch(32 + 16, 32) % kWarpSize == 0, "a 32-wide block gets a multiple of 32");
static_assert(padded_pitch(28, 28) == 28, "no padding where the row already fits");

void launch(const Args& a) {
  shared_tiles::launch_with_pitch(a, padded_pitch(shared_tiles::kBlockX + a.taps - 1, shared_tiles::kBlockX));
}

const Step kStep{"separable_conv/05_padded", launch,
                 "step 04's kernels, 28 x 28 threads; row pitch padded to 28 (mod 32) floats: no bank "
                 "conflicts",
                 constant_taps::load_taps};
LADDER_STEP(kStep);

}  // namespace separable_conv::padded
