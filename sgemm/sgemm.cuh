// sgemm: C = A·B in fp32, row-major, any M, N, K (the post "CUDA编程入门", SGEMM sections), and the
// side ladder C = A·Aᵀ (the post "CUDA实践指南(十八)").
//
// INTERFACE (fixed: every step implements one of these). The rest of this header — sizes, flags,
// inputs, the references, the check, the ceiling — belongs to the folder's harness.
#pragma once

#include "common/check.h"
#include "common/device.h"
#include "common/step.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace sgemm {

// One C = A·B on the device: A is m x k, B is k x n, C is m x n, all row-major and densely packed
// (row pitches k, n, n), from cudaMalloc (256-byte aligned base pointers).
struct Gemm {
  const float* A;
  const float* B;
  float* C;
  int64_t m, n, k;
  cudaStream_t stream;
  const ladder::DeviceInfo* dev;
  std::string tile;  // --tile NAME: a tunable step's candidate to use; "" = its default for this GPU
};

// One C = A·Aᵀ (the aat side ladder): A is m x k, C is m x m, row-major, densely packed.
struct Aat {
  const float* A;
  float* C;
  int64_t m, k;
  cudaStream_t stream;
  const ladder::DeviceInfo* dev;
};

using LaunchFn = void (*)(const Gemm& g);
using AatLaunchFn = void (*)(const Aat& a);

// A step, declared in its file as an aggregate:
//   main ladder:  const Step kStep{"sgemm/05_2d_blocktiling", launch};
//   tunable:      const Step kStep{"sgemm/09_pipelined", launch, nullptr, /*tunable=*/true};
//   aat ladder:   const Step kStep{"sgemm/aat_02_coalesced", nullptr, launch_aat};
// Only a tunable step accepts --tile NAME (its launcher throws ladder::UsageError for a name it does
// not know, listing the names it knows); the harness rejects --tile for the others.
struct Step {
  const char* id;
  LaunchFn launch;
  AatLaunchFn aat = nullptr;
  bool tunable = false;
};

}  // namespace sgemm
