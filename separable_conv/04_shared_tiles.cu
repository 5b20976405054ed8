// separable_conv step 04: row and column tiles with their halos in shared memory (the post's 28 x 28).
// A warp of the row pass reads pixels x - R .. x + 31 + R, each of them up to K times, one tap at a
// time; a block reads a segment blockDim.x + K - 1 pixels wide per row. Here each block first
// copies that segment (its tile plus a halo of R pixels on each side, zeros outside the image)
// into shared memory with coalesced loads, synchronizes, and then reads the K neighbours from
// shared memory: each image pixel leaves global memory once per block instead of once per tap.
// The column pass does the same with a tile blockDim.y + K - 1 rows tall. Taps stay in constant
// memory (step 03's arrays and loader).
// The block is the post's 28 x 28: its "const + shared" version needed a block size that divides
// the image (ours handles any size: edge blocks stage zeros and skip the stores). With 28 columns
// per block row, a warp holds the last 28 - o threads of one block row and the first 4 + o of the
// next (o = 0, 4, .., 24), so in the row pass its shared accesses are two runs `pitch` floats
// apart: with pitch = 28 + K - 1 (44 at K = 17) the second run falls on banks the first already
// uses and the access is replayed — the bank conflict step 05 removes.
// Nsight Compute: l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum, and shared wavefronts
// per shared instruction (the post's "shared memory load transaction per request": 1.871).
// Changes from step 03: shared-memory tiles with halos; 28 x 28 threads; two __syncthreads per tile.
// Costs: (28 + K - 1) x 28 floats of shared memory per block and pass (4.9 KB at K = 17); 784
// threads = 24.5 warps per block, so the last warp is half empty; 25 warps a block, so at most 2
// blocks per SM by warps — and the row pass's 40 registers a thread allow only 1 (ncu: about 39%
// warps active for the row pass, 73% for the column pass, at 4096², K = 17).
// Source: "separable convolution with CUDA", section 四 (use the shared memory); drawing the apron
// and counting it: Victor Podlozhnyuk, "Image Convolution with CUDA" (NVIDIA, 2007).
// Run: build/bin/separable_conv_04_shared_tiles
#include "03_constant_taps.cu"  // c_row_taps, c_col_taps and load_taps

namespace separable_conv::shared_tiles {

using constant_taps::c_col_taps;
using constant_taps::c_row_taps;

constexpr int kBlockX = 28;  // the post's const + shared block: 28 x 28 threads
constexpr int kBlockY = 28;
static_assert(kBlockX * kBlockY <= 1024, "a block holds at most 1024 threads");

// Row pass. Block row threadIdx.y stages in[y][x0 - R .. x0 + blockDim.x + R) at
// tile[threadIdx.y * pitch ...], then each thread adds its K neighbours from there.
__global__ void row_pass_shared(const float* in, float* tmp, int64_t width, int64_t height, int k,
                                int pitch) {
  extern __shared__ float tile[];
  const int r = k / 2, span = blockDim.x + k - 1;
  const int64_t tiles_y = ceil_div(height, blockDim.y);
  const int64_t x0 = blockIdx.x * int64_t(blockDim.x), x = x0 + threadIdx.x;
  float* row = tile + threadIdx.y * pitch;
  for (int64_t ty = blockIdx.y; ty < tiles_y; ty += gridDim.y) {
    const int64_t y = ty * blockDim.y + threadIdx.y;
    // Step 1: the row segment with its halo, zeros outside the image.
    for (int i = threadIdx.x; i < span; i += blockDim.x) {
      const int64_t xi = x0 - r + i;
      row[i] = (y < height && xi >= 0 && xi < width) ? in[y * width + xi] : 0.f;
    }
    __syncthreads();
    // Step 2: K taps against the staged neighbours.
    if (y < height && x < width) {
      float sum = 0;
      for (int i = 0; i < k; ++i) sum += c_row_taps[i] * row[threadIdx.x + i];
      tmp[y * width + x] = sum;
    }
    __syncthreads();  // the next tile row overwrites the segment
  }
}

// Column pass. The block stages tmp rows y0 - R .. y0 + blockDim.y + R of its blockDim.x columns,
// row after row (blockDim.x floats per row), then each thread adds its K neighbours down a column.
__global__ void column_pass_shared(const float* tmp, float* out, int64_t width, int64_t height, int k) {
  extern __shared__ float tile[];
  const int r = k / 2, span = blockDim.y + k - 1;
  const int64_t tiles_y = ceil_div(height, blockDim.y);
  const int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  for (int64_t ty = blockIdx.y; ty < tiles_y; ty += gridDim.y) {
    const int64_t y0 = ty * blockDim.y;
    // Step 1: the column segment with its halo, zeros outside the image.
    for (int j = threadIdx.y; j < span; j += blockDim.y) {
      const int64_t yj = y0 - r + j;
      tile[j * blockDim.x + threadIdx.x] = (x < width && yj >= 0 && yj < height) ? tmp[yj * width + x] : 0.f;
    }
    __syncthreads();
    // Step 2: K taps against the staged neighbours.
    const int64_t y = y0 + threadIdx.y;
    if (y < height && x < width) {
      float sum = 0;
      for (int j = 0; j < k; ++j) sum += c_col_taps[j] * tile[(threadIdx.y + j) * blockDim.x + threadIdx.x];
      out[y * width + x] = sum;
    }
    __syncthreads();  // the next tile row overwrites the segment
  }
}

// Both passes with a row-pass pitch of `pitch` floats per block row (>= kBlockX + K - 1).
void launch_with_pitch(const Args& a, int pitch) {
  const dim3 block(kBlockX, kBlockY), grid = tile_grid(a.width, a.height, kBlockX, kBlockY);
  const size_t row_bytes = sizeof(float) * kBlockY * pitch;
  const size_t col_bytes = sizeof(float) * (kBlockY + a.taps - 1) * kBlockX;
  ladder::require_shared_memory(reinterpret_cast<const void*>(row_pass_shared), row_bytes, *a.dev, "the row pass");
  ladder::require_shared_memory(reinterpret_cast<const void*>(column_pass_shared), col_bytes, *a.dev, "the column pass");
  row_pass_shared<<<grid, block, row_bytes, a.stream>>>(a.in, a.tmp, a.width, a.height, a.taps, pitch);
  CUDA_CHECK_LAUNCH();
  column_pass_shared<<<grid, block, col_bytes, a.stream>>>(a.tmp, a.out, a.width, a.height, a.taps);
  CUDA_CHECK_LAUNCH();
}

// The post's layout: each block row's segment right after the previous one, pitch = its width.
void launch(const Args& a) { launch_with_pitch(a, kBlockX + a.taps - 1); }

const Step kStep{"separable_conv/04_shared_tiles", launch,
                 "28 x 28 threads, one output each; tiles with halos in shared memory, row pitch "
                 "28 + K - 1 floats; taps in __constant__ memory",
                 constant_taps::load_taps};
LADDER_STEP(kStep);

}  // namespace separable_conv::shared_tiles
