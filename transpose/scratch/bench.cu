// Scratch: variants of step 06's kernel at 8192^2 (deleted after the device run).
#ifndef BENCH_06
#define BENCH_06 "transpose/06_vector_tiles.cu"
#endif
#include BENCH_06
#include "transpose/05_multi_element.cu"
#include <cstdio>
#include <vector>
#include <algorithm>
using namespace transpose;
using namespace transpose::vector_tiles;

static float median_ms(const std::function<void()>& f) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) f();
  std::vector<float> ms;
  for (int i = 0; i < 30; ++i) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float t; cudaEventElapsedTime(&t, a, b); ms.push_back(t); }
  std::sort(ms.begin(), ms.end()); return ms[ms.size()/2];
}

template <int T, int BY, int V>
void variant(const float* in, float* out, int64_t rows, int64_t cols, bool swap, const std::vector<float>& h_in, double copy_gbps) {
  TileGrid g = tile_grid(rows, cols, T, T);
  if (swap) { g.grid = dim3(g.grid.y, g.grid.x); g.rows_on_x = true; }
  auto f = [&] { transpose_vector_tiles<T, BY, V><<<g.grid, dim3(32, BY)>>>(in, out, rows, cols, g.rows_on_x); };
  cudaMemset(out, 0xFF, rows * cols * 4);
  f(); cudaDeviceSynchronize();
  std::vector<float> h(rows * cols); cudaMemcpy(h.data(), out, rows * cols * 4, cudaMemcpyDeviceToHost);
  int64_t bad = 0;
  for (int64_t r = 0; r < rows; ++r) for (int64_t c = 0; c < cols; ++c) bad += h[c * rows + r] != h_in[r * cols + c];
  float ms = median_ms(f);
  double gbps = 8.0 * rows * cols / (ms * 1e-3) / 1e9;
  printf("T=%-3d BY=%-2d V=%d swap=%d  %8.4f ms %7.1f GB/s %5.1f%%  bad=%lld  err=%s\n", T, BY, V, swap, ms, gbps, 100 * gbps / copy_gbps, (long long)bad, cudaGetErrorString(cudaGetLastError()));
}

int main() {
  const int64_t R = 8192, C = 8192, n = R * C;
  std::vector<float> h_in(n); for (int64_t i = 0; i < n; ++i) h_in[i] = float(i % 1000003) * 0.5f + 1;
  float *in, *out; cudaMalloc(&in, n * 4); cudaMalloc(&out, n * 4);
  cudaMemcpy(in, h_in.data(), n * 4, cudaMemcpyHostToDevice);
  float mc = median_ms([&] { cudaMemcpyAsync(out, in, n * 4, cudaMemcpyDeviceToDevice); });
  double copy = 8.0 * n / (mc * 1e-3) / 1e9;
  printf("memcpy D2D same bytes: %.4f ms %.1f GB/s\n", mc, copy);
  {
    TileGrid g = tile_grid(R, C, 32, 32);
    float ms = median_ms([&] { multi_element::transpose_multi_element<<<g.grid, dim3(32, 8)>>>(in, out, R, C, false); });
    printf("step05: %.4f ms %.1f GB/s %.1f%%\n", ms, 8.0 * n / (ms * 1e-3) / 1e9, 100 * 8.0 * n / (ms * 1e-3) / 1e9 / copy);
  }
  for (int swap = 0; swap < 2; ++swap) {
    variant<32, 8, 1>(in, out, R, C, swap, h_in, copy);
    variant<32, 8, 2>(in, out, R, C, swap, h_in, copy);
    variant<32, 8, 4>(in, out, R, C, swap, h_in, copy);
    variant<64, 8, 1>(in, out, R, C, swap, h_in, copy);
    variant<64, 8, 2>(in, out, R, C, swap, h_in, copy);
    variant<64, 8, 4>(in, out, R, C, swap, h_in, copy);
    variant<64, 16, 4>(in, out, R, C, swap, h_in, copy);
    variant<64, 4, 4>(in, out, R, C, swap, h_in, copy);
    variant<64, 16, 2>(in, out, R, C, swap, h_in, copy);
    variant<64, 32, 4>(in, out, R, C, swap, h_in, copy);
  }
  // correctness of edge tiles with vectors at a size that is a multiple of 4 but not of 64
  {
    const int64_t r2 = 4100, c2 = 260; std::vector<float> h2(r2 * c2); for (int64_t i = 0; i < r2 * c2; ++i) h2[i] = float(i) + 0.25f;
    cudaMemcpy(in, h2.data(), r2 * c2 * 4, cudaMemcpyHostToDevice);
    variant<64, 8, 4>(in, out, r2, c2, false, h2, copy);
    variant<64, 8, 2>(in, out, r2, c2, false, h2, copy);
    variant<32, 8, 4>(in, out, r2, c2, false, h2, copy);
  }
  return 0;
}
