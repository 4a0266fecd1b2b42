// Embedding lookup: a block copies whole rows, its threads the 16-byte chunks (or elements) of
// a row kUnroll at a time, all loads of a group issued before its stores. Each row's id is read
// once and checked against the vocabulary before the weight row is read.
#include "../host/embedding_launcher.hpp"
#include "launch.cuh"
#include "report_fault.cuh"

namespace tileops::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;

// W: the unit moved (a 16-byte pack or one element's bits); I: the id type.
template <class W, class I>
__global__ void embedding_kernel(EmbeddingArgs a, std::int64_t units_per_row) {
  const W* __restrict__ weight = static_cast<const W*>(a.weight);
  W* __restrict__ y = static_cast<W*>(a.y);
  for (std::int64_t row = blockIdx.x; row < a.count; row += gridDim.x) {
    const std::int64_t id = static_cast<const I*>(a.ids)[row];
    W* out = y + row * units_per_row;
    if (id < 0 || id >= a.vocab) {
      if (threadIdx.x == 0) report_fault(a.faults, FaultSource::embedding, FaultKind::id, row, 0, id, 0, a.vocab - 1);
      for (std::int64_t u = threadIdx.x; u < units_per_row; u += blockDim.x) out[u] = W{};
      continue;
    }
    const W* in = weight + id * units_per_row;
    for (std::int64_t base = threadIdx.x; base < units_per_row; base += kUnroll * blockDim.x) {
      W v[kUnroll];
#pragma unroll
      for (int k = 0; k < kUnroll; ++k) {
        const std::int64_t u = base + k * blockDim.x;
        if (u < units_per_row) v[k] = in[u];
      }
#pragma unroll
      for (int k = 0; k < kUnroll; ++k) {
        const std::int64_t u = base + k * blockDim.x;
        if (u < units_per_row) out[u] = v[k];
      }
    }
  }
}

template <class W>
void launch_units(const EmbeddingArgs& a, std::int64_t units_per_row, NativeStream s) {
  const unsigned blocks = blocks_for(a.count, 1);
  const int threads = threads_for(ceil_div(units_per_row, kUnroll), kThreads);
  if (a.index_dtype == DType::int32) embedding_kernel<W, std::int32_t><<<blocks, threads, 0, s>>>(a, units_per_row);
  else embedding_kernel<W, std::int64_t><<<blocks, threads, 0, s>>>(a, units_per_row);
}

}  // namespace

void launch_embedding(const EmbeddingArgs& a, void* stream) {
  if (a.count == 0 || a.row_bytes == 0) return;
  if (a.index_dtype != DType::int32 && a.index_dtype != DType::int64) throw_unsupported(a.index_dtype, "embedding");
  const NativeStream s = native_stream(stream);
  if (a.row_bytes % 16 == 0 && aligned16(a.weight) && aligned16(a.y)) {
    launch_units<Pack<std::uint32_t, 4>>(a, a.row_bytes / 16, s);
  } else if (a.row_bytes % 4 == 0 && reinterpret_cast<std::uintptr_t>(a.weight) % 4 == 0 &&
             reinterpret_cast<std::uintptr_t>(a.y) % 4 == 0) {
    launch_units<std::uint32_t>(a, a.row_bytes / 4, s);
  } else {
    launch_units<std::uint16_t>(a, a.row_bytes / 2, s);
  }
  check_launch("embedding");
}

}  // namespace tileops::gpu
