// A grouped (banded) order over a grid of tiles, for kernels that choose which tile a block takes:
// the tiles in work at one time then cover a compact region instead of a thin strip, so they share
// more of their inputs in L2 (sgemm tf32_04's persistent tiles, transpose 08's wide matrices).
//
//   grouped_tile(index, band, lines, across)
//       the grid is `lines` lines of `across` tiles each (tile rows of C for sgemm, tile columns of
//       the input for transpose); tiles are numbered in bands of `band` lines, each band walked
//       across, the band's lines fastest: index 0, 1, ... go down the first position of the band's
//       lines, then the next position. The last band may have fewer lines. band = 1 walks line
//       after line; band >= lines walks the whole grid across, the lines fastest.
//       Returns {line, position along the line}. Int: int64_t, or unsigned where the grid holds
//       fewer than 2^32 tiles (two 32-bit divisions instead of 64-bit ones).
// Host and device (the CPU tests check that every tile is visited once).
#pragma once

#include <cuda_runtime.h>

namespace ladder {

template <class Int>
struct GroupedTile {
  Int line, along;
};

template <class Int>
__host__ __device__ inline GroupedTile<Int> grouped_tile(Int index, Int band, Int lines, Int across) {
  const Int per_band = band * across, b = index / per_band, first = b * band;
  const Int height = lines - first < band ? lines - first : band;  // the last band may be shorter
  const Int in_band = index - b * per_band;
  return {first + in_band % height, in_band / height};
}

}  // namespace ladder
