// avg_matvec step 00: the CPU version, the post's cpu_version1 with OpenMP over batches.
// For each batch k (one OpenMP thread each): v[j] = the mean of row j, then out[i][k] = W[i] · v.
// The post's loop order is kept: the averaging walks the L rows side by side (i outer, j inner),
// one double from each row in turn, so consecutive reads are M * 8 bytes apart; a cache line of a
// row is reused 8 iterations later, after L other lines (32 KB at L = 512: still in cache).
// Changes from the post: out is assigned, not accumulated with += into memory the post never
// cleared, and every index is 64-bit.
// Costs: host memory bandwidth (tens of GB/s, far below HBM) and N-way parallelism only: N = 1 runs
// on one core.
// Source: "【CUDA】Nsight profile驱动的CUDA优化", 1.2 CPU版本实现 (cpu_version1).
// Run: build/bin/avg_matvec_00_cpu --L 512 --M 512 --N 1024
#include "avg_matvec/avg_matvec.cuh"

#include <vector>

namespace avg_matvec::cpu {

// Host arrays in, out complete on return; no device, no stream.
void average_then_matvec_on_cpu(const Args& a) {
  const int64_t L = a.L, M = a.M, N = a.N;
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < N; ++k) {
    std::vector<double> v(static_cast<size_t>(L), 0.0);
    const double* batch = a.input + k * M * L;
    for (int64_t i = 0; i < M; ++i)  // average over M: all L rows at once
      for (int64_t j = 0; j < L; ++j) v[j] += batch[j * M + i];
    for (int64_t j = 0; j < L; ++j) v[j] /= static_cast<double>(M);
    for (int64_t i = 0; i < L; ++i) {  // matrix-vector multiply
      double acc = 0;
      for (int64_t j = 0; j < L; ++j) acc += a.W[i * L + j] * v[j];
      a.out[i * N + k] = acc;
    }
  }
}

const Step kStep{"avg_matvec/00_cpu", average_then_matvec_on_cpu, Runs::on_cpu};
LADDER_STEP(kStep);

}  // namespace avg_matvec::cpu
