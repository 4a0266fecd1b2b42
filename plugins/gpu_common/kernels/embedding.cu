// Embedding lookup: one thread per 16-byte chunk (or element) of an output row, each reading its
// id and checking it against the vocabulary before it reads the weight row.
#include "../host/embedding_launcher.hpp"
#include "launch.cuh"
#include "report_fault.cuh"

namespace tileops::gpu {
namespace {

constexpr int kThreads = 256;

// W: the unit moved (a 16-byte pack or one element's bits); I: the id type.
template <class W, class I>
__global__ void embedding_kernel(EmbeddingArgs a, std::int64_t units_per_row) {
  const std::int64_t total = a.count * units_per_row;
  for (std::int64_t i = global_thread(); i < total; i += grid_threads()) {
    const std::int64_t row = i / units_per_row;
    const std::int64_t unit = i - row * units_per_row;
    const std::int64_t id = static_cast<const I*>(a.ids)[row];
    W value{};
    if (id < 0 || id >= a.vocab) {
      if (unit == 0) report_fault(a.faults, FaultSource::embedding, FaultKind::id, row, 0, id, 0, a.vocab - 1);
    } else {
      value = static_cast<const W*>(a.weight)[id * units_per_row + unit];
    }
    static_cast<W*>(a.y)[i] = value;
  }
}

template <class W>
void launch_units(const EmbeddingArgs& a, std::int64_t units_per_row, NativeStream s) {
  const unsigned blocks = blocks_for(a.count * units_per_row, kThreads);
  if (a.index_dtype == DType::int32) embedding_kernel<W, std::int32_t><<<blocks, kThreads, 0, s>>>(a, units_per_row);
  else embedding_kernel<W, std::int64_t><<<blocks, kThreads, 0, s>>>(a, units_per_row);
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
