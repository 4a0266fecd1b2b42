#include "strided_layout.hpp"

#include <algorithm>

namespace tileops::gpu {

bool coalesce(std::span<const std::int64_t> shape, std::span<const std::int64_t> first,
              std::span<const std::int64_t> second, PairLayout& out) {
  // Built innermost axis first, then reversed.
  std::array<std::int64_t, kMaxStridedRank> s{}, a{}, b{};
  int rank = 0;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 1) continue;
    if (rank > 0 && first[d] == a[rank - 1] * s[rank - 1] && second[d] == b[rank - 1] * s[rank - 1]) {
      s[rank - 1] *= shape[d];
      continue;
    }
    if (rank == kMaxStridedRank) return false;
    s[rank] = shape[d];
    a[rank] = first[d];
    b[rank] = second[d];
    ++rank;
  }
  out.rank = rank;
  for (int d = 0; d < rank; ++d) {
    out.shape[d] = s[rank - 1 - d];
    out.first[d] = a[rank - 1 - d];
    out.second[d] = b[rank - 1 - d];
  }
  return true;
}

}  // namespace tileops::gpu
