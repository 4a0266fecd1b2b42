// Copies between two strided views of device memory (what Tensor::contiguous() and copy_from
// need on the device), one element per thread, moved as a 1-, 2-, 4- or 8-byte word.
#include "../host/launchers.hpp"
#include "../host/strided_layout.hpp"
#include "launch.cuh"

namespace tileops::gpu {
namespace {

constexpr int kThreads = 256;

struct CopyLayout {
  int rank;
  std::int64_t shape[kMaxStridedRank];
  std::int64_t dst[kMaxStridedRank];
  std::int64_t src[kMaxStridedRank];
};

template <class Word>
__global__ void strided_copy(Word* __restrict__ dst, const Word* __restrict__ src, std::int64_t numel, CopyLayout l) {
  for (std::int64_t i = global_thread(); i < numel; i += grid_threads()) {
    std::int64_t rest = i, od = 0, os = 0;
    for (int d = l.rank - 1; d >= 0; --d) {
      const std::int64_t coord = rest % l.shape[d];
      rest /= l.shape[d];
      od += coord * l.dst[d];
      os += coord * l.src[d];
    }
    dst[od] = src[os];
  }
}

template <class Word>
void run(void* dst, const void* src, std::int64_t numel, const CopyLayout& l, void* stream) {
  strided_copy<Word><<<blocks_for(numel, kThreads), kThreads, 0, native_stream(stream)>>>(
      static_cast<Word*>(dst), static_cast<const Word*>(src), numel, l);
}

}  // namespace

bool launch_strided_copy(void* dst, const void* src, const std::int64_t* shape, std::size_t rank,
                         const std::int64_t* dst_strides, const std::int64_t* src_strides, std::size_t element_size,
                         void* stream) {
  PairLayout p;
  if (!coalesce({shape, rank}, {dst_strides, rank}, {src_strides, rank}, p)) return false;
  if (element_size != 1 && element_size != 2 && element_size != 4 && element_size != 8) return false;
  std::int64_t numel = 1;
  for (std::size_t d = 0; d < rank; ++d) numel *= shape[d];
  if (numel == 0) return true;
  CopyLayout l{p.rank, {}, {}, {}};
  for (int d = 0; d < p.rank; ++d) {
    l.shape[d] = p.shape[d];
    l.dst[d] = p.first[d];
    l.src[d] = p.second[d];
  }
  switch (element_size) {
    case 1:
      run<std::uint8_t>(dst, src, numel, l, stream);
      break;
    case 2:
      run<std::uint16_t>(dst, src, numel, l, stream);
      break;
    case 4:
      run<std::uint32_t>(dst, src, numel, l, stream);
      break;
    default:
      run<std::uint64_t>(dst, src, numel, l, stream);
      break;
  }
  check_launch("strided_copy");
  return true;
}

}  // namespace tileops::gpu
