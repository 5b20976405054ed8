// sgemm step 06: the post's retune for waves and occupancy — smaller block tiles, fewer registers.
// Step 05's kernel, unchanged, with other numbers. The post profiled step 05 and found two limits:
// the grid was too small for its GPU ("0.9 full waves": fewer 128 x 128 tiles than block slots), and
// 94 registers per thread left room for only two blocks per SM (33.3% theoretical occupancy). Its
// retune shrinks the block tile (more, smaller blocks: more waves, a smaller last one) and the
// thread tile (4 x 4: fewer registers, more blocks per SM) — at the price of less reuse per loaded
// value (TM + TN loads feed TM x TN multiply-adds). Which trade wins depends on the GPU and the size,
// so this step is tunable (--tile NAME; BM x BN x BK _ TM x TN [_bN: N blocks per SM instead of the
// most 64 registers allow]; registers from ptxas for sm_90 (CUDA 13.0), blocks per SM from them,
// waves = blocks / (132 SMs x blocks per SM) at 4096^3):
//   64x128x8_4x4 (default)  4 x 4 thread tiles, 512 threads, 64 registers, 2 blocks per SM (32
//                           warps, 50%), 7.76 waves; a warp is one row of threads, so its 32 lanes
//                           read one A value (a broadcast) and 32 different B values per load
//   64x64x8_4x4             the post's own numbers: 256 threads, 64 registers, 4 blocks per SM
//                           (32 warps, 50%), 7.76 waves, half of step 05's reuse per load
//   64x64x4_4x4             the same with BK = 4: a thread's 4 rows of As no longer share banks
//   64x64x16_4x4            the same with BK = 16: half the barriers per multiply-add (4 bytes of
//                           spills)
//   64x64x8_4x4_b3          the post's tiling with 79 registers: 3 blocks per SM (24 warps)
//   128x64x8_4x4            512 threads, 64 registers (8 bytes of spills), 2 blocks per SM
//   64x128x8_8x4            half the accumulators of step 05: 109 registers, 2 blocks, 7.76 waves
//   64x128x4_8x4            the same with BK = 4 (101 registers)
//   128x64x8_8x4            80 registers (12 bytes of spills), 3 blocks per SM — and 5.17 waves:
//                           a sixth wave 17% full
//   128x128x8_8x4           step 05's block tile with 8 x 4 thread tiles: 512 threads, 109
//                           registers, one block (16 warps) per SM
//   64x128x8_8x8            half of step 05's block tile, the same 8 x 8 thread tile: 128 threads,
//                           128 registers (60 bytes of spills), 4 blocks per SM (16 warps)
//   128x128x8_8x8           step 05's tiling, for comparison in the same executable
// Changes from step 05: Tiling<...> arguments and a table of candidates; not a line of the kernel.
// Costs: see each line above; the chapter and its appendix show what the profile says about the
// trade. On the H100 no retune beats step 05's own tiling (the appendix's candidate table): with the
// copies free of checks, the 8 x 8 tile's reuse is worth more than the occupancy the 4 x 4 tiles buy.
// Source: "CUDA编程入门", section 线程粗化, 优化思路 and 指标对比 (减小 BM 和 BN 提升 Full Waves; 降低 TM,
// TN 以平衡 Occupancy). Run: build/bin/sgemm_06_2d_retuned --m 4096 [--tile 64x64x8_4x4]
#include "05_2d_blocktiling.cu"  // sgemm_2d_blocktiling, Tiling and launch_tiling, unchanged

#include <algorithm>
#include <iterator>
#include <string>

namespace sgemm::retuned {

using blocktiling_2d::launch_tiling;
using blocktiling_2d::Tiling;

// name: BM x BN x BK _ TM x TN. The last Tiling argument is the blocks per SM that __launch_bounds__
// leaves registers for: 64K registers / (threads x blocks) each, e.g. 4 x 256 threads -> 64.
const TileCandidate kCandidates[] = {
    {"64x128x8_4x4", launch_tiling<Tiling<64, 128, 8, 4, 4, 2>>},
    {"64x64x8_4x4", launch_tiling<Tiling<64, 64, 8, 4, 4, 4>>},
    {"64x64x4_4x4", launch_tiling<Tiling<64, 64, 4, 4, 4, 4>>},
    {"64x64x16_4x4", launch_tiling<Tiling<64, 64, 16, 4, 4, 4>>},
    {"64x64x8_4x4_b3", launch_tiling<Tiling<64, 64, 8, 4, 4, 3>>},
    {"128x64x8_4x4", launch_tiling<Tiling<128, 64, 8, 4, 4, 2>>},
    {"64x128x8_8x4", launch_tiling<Tiling<64, 128, 8, 8, 4, 2>>},
    {"64x128x4_8x4", launch_tiling<Tiling<64, 128, 4, 8, 4, 2>>},
    {"128x64x8_8x4", launch_tiling<Tiling<128, 64, 8, 8, 4, 3>>},
    {"128x128x8_8x4", launch_tiling<Tiling<128, 128, 8, 8, 4, 1>>},
    {"64x128x8_8x8", launch_tiling<Tiling<64, 128, 8, 8, 8, 4>>},
    {"128x128x8_8x8", launch_tiling<blocktiling_2d::PostTiling>},
};
constexpr const char* kId = "sgemm/06_2d_retuned";
// The default on every GPU: the post's retune is a lesson, not a search, and this tiling fits any
// GPU this suite runs on — 512 threads, 64 registers each (32K of an SM's 64K), 6 KB of static
// shared memory: two blocks per SM on a T4 (1,024 threads), an RTX 3060 (1,536), an A100 or an
// H100 (2,048), registers or threads the limit. The report's choice line says how many blocks per
// SM and waves it gets here.
using DefaultTiling = Tiling<64, 128, 8, 4, 4, 2>;
constexpr const char* kDefaultTile = "64x128x8_4x4";  // the fastest retune on the H100 at 4096^3 (chapter)

void launch(const Gemm& g) {
  pick_tile(kId, g.tile, kCandidates, std::size(kCandidates), kDefaultTile)(g);
}

std::string describe(const Gemm& g) {
  if (!g.tile.empty()) return g.tile + " (--tile)";
  const int per_sm = ladder::blocks_per_sm(
      *g.dev, reinterpret_cast<const void*>(blocktiling_2d::sgemm_2d_blocktiling<DefaultTiling>),
      DefaultTiling::kThreads, 0);
  const int64_t tiles = tile_grid(g.m, g.n, DefaultTiling::BM, DefaultTiling::BN).blocks;
  const int64_t slots = int64_t(g.dev->sm_count) * std::max(per_sm, 1);
  return std::string(kDefaultTile) + " (the retune's default on every GPU): " + std::to_string(per_sm) +
         " blocks of " + std::to_string(DefaultTiling::kThreads) + " threads per SM here, " + std::to_string(tiles) +
         " tiles in " + std::to_string(slots) + " slots = " + std::to_string((tiles + slots - 1) / slots) + " waves";
}

const Step kStep{kId, launch, nullptr, /*tunable=*/true, /*workspace_bytes=*/nullptr, describe};
LADDER_STEP(kStep);

}  // namespace sgemm::retuned
