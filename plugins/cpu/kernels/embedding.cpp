#include <cstring>
#include <stdexcept>
#include <string>

#include "cpu_kernels.hpp"
#include "thread_pool.hpp"
#include "validate.hpp"

namespace tileops::cpu {
namespace {

template <class Id>
void check_ids(const Id* ids, int64_t count, int64_t vocab) {
  for (int64_t i = 0; i < count; ++i) {
    if (ids[i] >= 0 && ids[i] < vocab) continue;
    throw std::invalid_argument("embedding: ids[" + std::to_string(i) + "] = " + std::to_string(ids[i]) +
                                " is outside [0, " + std::to_string(vocab) + ")");
  }
}

// Rows [i0, i1) of y, one memcpy per id: the row copy is what the library's memcpy vectorises.
template <class Id>
void gather_rows(const Id* ids, const std::byte* weight, std::byte* y, size_t row_bytes, int64_t i0, int64_t i1) {
  for (int64_t i = i0; i < i1; ++i) {
    std::memcpy(y + static_cast<size_t>(i) * row_bytes, weight + static_cast<size_t>(ids[i]) * row_bytes, row_bytes);
  }
}

}  // namespace

void embedding(DType dtype, DType index_dtype, int64_t count, int64_t vocab, int64_t hidden,
               const void* ids, const void* weight, void* y) {
  constexpr const char* kName = "embedding";
  check_dtype(kName, index_dtype, {DType::int32, DType::int64});
  check_sizes(kName, {count, vocab, hidden});
  check_buffer(kName, "ids", ids, count);
  check_buffer(kName, "weight", weight, checked_product(kName, vocab, hidden));
  check_buffer(kName, "y", y, checked_product(kName, count, hidden));
  if (count == 0) return;
  const auto row_bytes = static_cast<size_t>(hidden) * dtype_size(dtype);
  const auto* table = static_cast<const std::byte*>(weight);
  auto* out = static_cast<std::byte*>(y);
  // Each id moves its row twice: read from weight, written to y.
  const auto item_bytes = static_cast<int64_t>(2 * row_bytes);
  if (index_dtype == DType::int32) {
    const auto* p = static_cast<const int32_t*>(ids);
    check_ids(p, count, vocab);
    parallel_for(count, item_bytes, [&](int64_t i0, int64_t i1) { gather_rows(p, table, out, row_bytes, i0, i1); });
  } else {
    const auto* p = static_cast<const int64_t*>(ids);
    check_ids(p, count, vocab);
    parallel_for(count, item_bytes, [&](int64_t i0, int64_t i1) { gather_rows(p, table, out, row_bytes, i0, i1); });
  }
}

}  // namespace tileops::cpu
