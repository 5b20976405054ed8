// transpose step 02: the post's fix for the reads — blocks 32 wide (32 x 8), same kernel.
// A warp is now exactly one block row: 32 threads with consecutive threadIdx.x read 32 consecutive
// floats of one row of `in`, one whole 128-byte line per load request. The writes are still
// strided: those 32 threads write one column of `out`, 32 floats in 32 different rows, each alone
// in its 32-byte sector, so every store request touches 32 sectors to move 128 bytes.
// Changes from step 01: dim3 block(32, 8) instead of (16, 16); the kernel is step 01's, unchanged.
// Costs: the strided write is now worse than step 01's (32 sectors per request against 16): the
// post fixes the read side only; step 03 fixes the write side.
// Source: "CUDA编程入门", section 使用SharedMemory优化矩阵转置 ("优化我们的核函数的参数到
// <<<32, y, z>>>"). Run: build/bin/transpose_02_naive_32wide --rows 8192 --cols 8192
#include "transpose/01_naive_16x16.cu"

namespace transpose::naive_32wide {

constexpr int kBlockX = 32;  // one warp per block row: a warp reads one 128-byte line
constexpr int kBlockY = 8;   // 256 threads, as in step 01
static_assert(kBlockX == 32, "the point of the step: a warp spans exactly one row segment");

void launch(const ladder::DeviceInfo&, const float* in, float* out, int64_t rows, int64_t cols,
            cudaStream_t stream) {
  const TileGrid g = tile_grid(rows, cols, kBlockY, kBlockX);
  naive_16x16::transpose_naive<<<g.grid, dim3(kBlockX, kBlockY), 0, stream>>>(in, out, rows, cols,
                                                                              g.rows_on_x);
  CUDA_CHECK_LAUNCH();
}

const Step kStep{"transpose/02_naive_32wide", launch, "32 x 8 threads, one element each, no shared memory"};
LADDER_STEP(kStep);

}  // namespace transpose::naive_32wide
