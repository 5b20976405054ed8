// separable_conv step 00: the CPU passes, the point every GPU step is compared with.
// The post's SeparableConvolutionRowSerial and SeparableConvolutionColumnSerial in float, rows
// split over the cores with OpenMP: the row pass walks each row with the taps innermost (the
// image is read K times, from cache); the column pass adds K whole rows of the intermediate into
// each output row, so its inner loop runs along a row and vectorizes. Zero padding: only the taps
// that meet the image are applied. No device memory, no transfers.
// Costs: two passes over host memory (16 B per pixel, as any two-pass design) at host bandwidth.
// Source: "separable convolution with CUDA", section 零 (the CPU serial code it starts from).
// Run: build/bin/separable_conv_00_cpu --width 8192 --height 8192 --taps 17
#include "separable_conv/separable_conv.cuh"

namespace separable_conv::cpu {

// a.tmp[y][x] = sum_i row_taps[i] * in[y][x + i - R], then a.out[y][x] = sum_j col_taps[j] * tmp[y + j - R][x].
void convolve_on_cpu(const Args& a) {
  const int64_t w = a.width, h = a.height, r = a.taps / 2;
#pragma omp parallel for schedule(static)
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      const int64_t i_lo = std::max<int64_t>(0, r - x), i_hi = std::min<int64_t>(a.taps, w - x + r);
      const float* src = a.in + y * w + x - r;
      float sum = 0;
      for (int64_t i = i_lo; i < i_hi; ++i) sum += a.row_taps[i] * src[i];
      a.tmp[y * w + x] = sum;
    }
#pragma omp parallel for schedule(static)
  for (int64_t y = 0; y < h; ++y) {
    float* dst = a.out + y * w;
    for (int64_t x = 0; x < w; ++x) dst[x] = 0;
    const int64_t j_lo = std::max<int64_t>(0, r - y), j_hi = std::min<int64_t>(a.taps, h - y + r);
    for (int64_t j = j_lo; j < j_hi; ++j) {
      const float t = a.col_taps[j];
      const float* src = a.tmp + (y + j - r) * w;
      for (int64_t x = 0; x < w; ++x) dst[x] += t * src[x];
    }
  }
}

const Step kStep{"separable_conv/00_cpu", convolve_on_cpu,
                 "row pass then column pass in float, OpenMP over rows", nullptr, Transfers::none, "",
                 true, Runs::on_cpu};
LADDER_STEP(kStep);

}  // namespace separable_conv::cpu
