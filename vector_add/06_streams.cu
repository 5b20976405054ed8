// vector_add step 06: the end-to-end run pipelined in chunks over several streams.
// A stream is a FIFO queue: work in one stream runs in order, work in different streams may
// overlap. Cut the arrays into chunks and give each chunk its own H2D copies, kernel and D2H copy
// on a stream (round-robin): while chunk c is computed, chunk c+1 is copied in and chunk c-1 is
// copied out. The H100 has separate copy engines for each direction, so H2D and D2H overlap too.
// What it gains here is the copies overlapping each other, not the kernel hidden: the kernel takes
// ~0.4 ms of a trip of tens of ms, while the uploads on one copy engine overlap the downloads on the
// other. The first upload and the last download overlap nothing, so the floor is not zero; the
// harness measures it rather than computing it from the copy rates. Compare total_ms with
// transfer_floor_ms: the same chunked copies on the same streams with no kernel.
// Changes from step 05: 16 chunks round-robin over 4 streams (kStreams x kChunksPerStream), each
// with its own cudaMemcpyAsync copies and kernel, instead of three whole-array copies.
// Costs: needs pinned memory (cudaMemcpyAsync from pageable memory is synchronous); every copy has
// a fixed cost of microseconds, so too small a chunk pays more in overhead than it overlaps.
// Source: "CUDA编程入门", the stream[] version of 第三次优化. Run: build/bin/vector_add_06_streams
#include "04_grid_stride.cu"  // add_grid_stride and its launcher

namespace vector_add::streams {

constexpr int kStreams = 4;          // the post's four streams
constexpr int kChunksPerStream = 4;  // 16 chunks: small enough to overlap, large enough to stream

void pipelined_end_to_end(const ladder::DeviceInfo& dev, Arrays host, Arrays device, int64_t n,
                          LaunchFn launch, Streams streams) {
  const int64_t chunks = static_cast<int64_t>(streams.count) * kChunksPerStream;
  const int64_t chunk = (n + chunks - 1) / chunks;
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * chunk;
    if (begin >= n) break;  // small n: fewer, non-empty chunks
    const int64_t count = std::min(chunk, n - begin);
    const size_t bytes = ladder::bytes_of<float>(count);
    cudaStream_t s = streams.s[c % streams.count];
    // Step 1: this chunk's inputs in. Step 2: its kernel. Step 3: its result out.
    CUDA_CHECK(cudaMemcpyAsync(device.x + begin, host.x + begin, bytes, cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaMemcpyAsync(device.y + begin, host.y + begin, bytes, cudaMemcpyHostToDevice, s));
    if (launch) launch(dev, Arrays{device.x + begin, device.y + begin, device.r + begin}, count, s);
    CUDA_CHECK(cudaMemcpyAsync(host.r + begin, device.r + begin, bytes, cudaMemcpyDeviceToHost, s));
  }
  for (int i = 0; i < streams.count; ++i) CUDA_CHECK(cudaStreamSynchronize(streams.s[i]));
}

const Step kStep{"vector_add/06_streams", grid_stride::launch, Runs::on_gpu, ladder::HostKind::pinned,
                 pipelined_end_to_end, kStreams};
LADDER_STEP(kStep);

}  // namespace vector_add::streams
