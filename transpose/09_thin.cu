// transpose step 09: thin matrices — at most 16 rows (or columns), the other side long.
// Steps 01-08 move square-ish tiles: at 8 x 2^21 a 64 x 128 tile is 8 x 128, an eighth of it real,
// and each warp writes rows of `out` 8 floats (32 bytes) long, a sector per row, one row per lane:
// the copy step moves the same bytes far faster.
// A thin matrix needs no square tile. With R <= 16 rows, the R rows of a span of columns are R
// contiguous pieces of `in`, and the rows of `out` they become lie one after another: out[c][0..R)
// for consecutive c is one contiguous range. So a block takes a span of the long side and
//   1. reads its R pieces (the strided side), each warp 32 consecutive floats of one piece;
//   2. writes its part of `out` (the contiguous side) as one range, each warp 32 consecutive floats,
// through shared memory in between, R rows of the span, padded so that a warp's 32 reads of the
// transposed order spread over the banks (pitch = span + ceil(32 / R): lanes step through R rows
// and 32 / R columns): 32 banks for R = 1, 2, 3, 4, 8, 11 and 16, at most two words a bank for the
// other R (by the index arithmetic). A matrix with at most 16 columns is the mirror image: the
// contiguous side is read, the strided side written. Every other matrix runs step 08 unchanged.
// Changes from step 08: thin shapes get their own kernel (R a template argument, 1..16, so that
// every division by R is a multiply); each thread loads a batch of kBatch elements before it stores
// them (bytes in flight, as vector_add 07; cuobjdump -sass build/bin/transpose_09_thin: reading
// the R rows of `in`, 5 of the 8 loads come before the first shared store and 3 right after it;
// reading one range, all 8, 7 at R = 1); the span is about 8,192 elements per block (32 KB each
// way), shared memory R x (span + pad) floats.
// Costs: 32 kernels (R = 1..16, both orientations) in the executable; scalar 4-byte accesses on
// both sides (a row of `in` starts anywhere for odd lengths), which the batch of loads in flight
// has to make up for.
// No --variant (a usage error, exit 2): the thin kernels have no candidates, and the other shapes
// run the tile 08's rule picks.
// Source: beyond the posts; the layout argument is the same as 07's (write whole sectors, one
// owner each).
// Run: build/bin/transpose_09_thin --rows 8 --cols 2097152
#include "transpose/08_grid_order.cu"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>
#include <utility>

namespace transpose::thin {

constexpr int kMaxThin = 16;   // the thin side: at most this many rows (or columns)
constexpr int kThreads = 256;
constexpr int kBatch = 8;      // loads each thread makes before their stores (in the source)

// The sizes of a block's work for a thin side of R.
template <int R>
struct Thin {
  static_assert(R >= 1 && R <= kMaxThin, "a thin side of 1 to 16");
  // Elements of the long side per block: about 8,192 elements in all, a whole number of warps wide.
  static constexpr int kSpan = std::max(32, 8192 / R / 32 * 32);
  // pitch = kSpan + kPad, kPad = ceil(32 / R): in the transposed order a warp's lanes cover R rows
  // of 32 / R columns each, and row t of them starts kPad banks after row t - 1 (conflict-free for
  // R = 1, 2, 3, 4, 8, 11, 16; at most 2-way for the other R).
  static constexpr int kPad = (32 + R - 1) / R;
  static constexpr int kPitch = kSpan + kPad;
  static constexpr size_t kSmemBytes = sizeof(float) * R * kPitch;  // at most 33 KB: no opt-in
};

// Elements i = 0 .. n-1 where valid(i), kBatch loads per thread before their stores (the SASS may
// issue some of them after the first store: see the header).
template <class Valid, class Load, class Store>
__device__ __forceinline__ void move(int n, Valid valid, Load load, Store store) {
  for (int base = threadIdx.x; base < n; base += kThreads * kBatch) {
    float v[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
      if (base + u * kThreads < n && valid(base + u * kThreads)) v[u] = load(base + u * kThreads);
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
      if (base + u * kThreads < n && valid(base + u * kThreads)) store(base + u * kThreads, v[u]);
  }
}

// kWide: `in` is R x long_n (R rows), `out` long_n x R. Otherwise `in` is long_n x R (R columns),
// `out` R x long_n. Block b moves long-side elements [l0, l0 + span), l0 = b * kSpan, span <= kSpan
// (less in the last block). tile[t * kPitch + l] holds thin index t, long index l0 + l.
//   strided side:    i = t * kSpan + l (t < R, l < kSpan, valid while l < span), element t of the
//                    thin side at l0 + l: row t of `in` (wide) or of `out` (tall), long_n apart;
//   contiguous side: o = l * R + t (o < span * R), one range from l0 * R on.
// Divisions are by R and kSpan, compile-time constants.
template <int R, bool kWide>
__global__ void __launch_bounds__(kThreads)
    transpose_thin(const float* __restrict__ in, float* __restrict__ out, int64_t long_n) {
  using T = Thin<R>;
  extern __shared__ float tile[];
  const int64_t l0 = static_cast<int64_t>(blockIdx.x) * T::kSpan;
  const int span = static_cast<int>(long_n - l0 < T::kSpan ? long_n - l0 : T::kSpan);
  const auto strided_valid = [&](int i) { return i % T::kSpan < span; };
  const auto strided_at = [&](int i) { return static_cast<int64_t>(i / T::kSpan) * long_n + l0 + i % T::kSpan; };
  const auto strided_tile = [&](int i) { return (i / T::kSpan) * T::kPitch + i % T::kSpan; };
  const auto contiguous_tile = [&](int o) { return (o % R) * T::kPitch + o / R; };
  const auto always = [](int) { return true; };

  if constexpr (kWide) {  // read the R rows of `in`, write one range of `out`
    move(R * T::kSpan, strided_valid, [&](int i) { return in[strided_at(i)]; },
         [&](int i, float v) { tile[strided_tile(i)] = v; });
    __syncthreads();
    move(R * span, always, [&](int o) { return tile[contiguous_tile(o)]; },
         [&](int o, float v) { out[l0 * R + o] = v; });
  } else {  // read one range of `in`, write the R rows of `out`
    move(R * span, always, [&](int o) { return in[l0 * R + o]; },
         [&](int o, float v) { tile[contiguous_tile(o)] = v; });
    __syncthreads();
    move(R * T::kSpan, strided_valid, [&](int i) { return tile[strided_tile(i)]; },
         [&](int i, float v) { out[strided_at(i)] = v; });
  }
}

template <int R, bool kWide>
void launch_thin(const float* in, float* out, int64_t long_n, cudaStream_t stream) {
  using T = Thin<R>;
  // long_n * R floats fit in device memory, so the blocks number far below 2^31.
  const int64_t blocks = (long_n + T::kSpan - 1) / T::kSpan;
  transpose_thin<R, kWide><<<static_cast<unsigned>(blocks), kThreads, T::kSmemBytes, stream>>>(in, out, long_n);
  CUDA_CHECK_LAUNCH();
}

using ThinLaunch = void (*)(const float*, float*, int64_t, cudaStream_t);

// launch_thin<1, kWide> ... launch_thin<16, kWide>, indexed by R - 1.
template <bool kWide, int... Rm1>
constexpr std::array<ThinLaunch, sizeof...(Rm1)> thin_launchers(std::integer_sequence<int, Rm1...>) {
  return {launch_thin<Rm1 + 1, kWide>...};
}
constexpr auto kWideLaunchers = thin_launchers<true>(std::make_integer_sequence<int, kMaxThin>{});
constexpr auto kTallLaunchers = thin_launchers<false>(std::make_integer_sequence<int, kMaxThin>{});

// Step 08's launcher for its rule's tile on this device, looked up once per device.
LaunchFn grid_order_default(const ladder::DeviceInfo& dev) {
  static const ladder::DeviceInfo* seen = nullptr;
  static LaunchFn chosen = nullptr;
  if (seen != &dev || !chosen) {
    const std::string name = grid_order::choose(dev).name;
    const Variant* v = find_variant(grid_order::kVariants, name);
    if (!v) throw std::logic_error("transpose/09_thin: step 08's rule chose '" + name + "', no variant of it");
    chosen = v->launch;
    seen = &dev;
  }
  return chosen;
}

void launch(const ladder::DeviceInfo& dev, const float* in, float* out, int64_t rows, int64_t cols,
            cudaStream_t stream) {
  if (rows <= kMaxThin && rows <= cols) return kWideLaunchers[rows - 1](in, out, cols, stream);
  if (cols <= kMaxThin) return kTallLaunchers[cols - 1](in, out, rows, stream);
  grid_order_default(dev)(dev, in, out, rows, cols, stream);
}

const Step kStep{"transpose/09_thin", launch,
                 "at most 16 rows or columns: 256 threads, a span of ~8,192 elements per block "
                 "through R x (span + pad) floats of shared memory; otherwise step 08's default"};
LADDER_STEP(kStep);

}  // namespace transpose::thin
