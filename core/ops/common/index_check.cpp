#include "common/index_check.hpp"

#include <string>

#include "tileops/errors.hpp"

namespace tileops {
namespace {

// "[i, j, k]", the position of flat index `flat` in a contiguous tensor of `shape`.
std::string position_of(std::int64_t flat, const Shape& shape) {
  std::string out;
  for (std::size_t d = shape.size(); d-- > 0;) {
    const std::int64_t extent = shape[d];
    out.insert(0, std::to_string(flat % extent) + (out.empty() ? "" : ", "));
    flat /= extent;
  }
  return "[" + out + "]";
}

template <class Index>
void check_typed(std::string_view op, const Tensor& indices, std::int64_t count, const IndexTarget& target) {
  const Index* values = indices.data<Index>();
  for (std::int64_t i = 0; i < indices.numel(); ++i) {
    const std::int64_t index = values[i];
    if (index >= 0 && index < count) continue;
    const std::string expected =
        count > 0 ? "expected 0 to " + std::to_string(count - 1) : std::string(target.among) + " is empty";
    throw ValueError(std::string(op) + ": " + std::string(target.input) + position_of(i, indices.shape()) + " = " +
                     std::to_string(index) + " is outside " + std::string(target.among) + ": " + expected + " (" +
                     std::string(target.size) + ")");
  }
}

}  // namespace

void check_indices(std::string_view op, const Tensor& indices, std::int64_t count, const IndexTarget& target) {
  if (indices.dtype() == DType::int32) {
    check_typed<std::int32_t>(op, indices, count, target);
  } else {
    check_typed<std::int64_t>(op, indices, count, target);
  }
}

}  // namespace tileops
