#include "embedding/embedding_ids.hpp"

#include <string>

#include "tileops/errors.hpp"

namespace tileops::embedding {
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

template <class Id>
void check_typed(std::string_view op, const Tensor& ids, std::int64_t vocab) {
  const Id* values = ids.data<Id>();
  for (std::int64_t i = 0; i < ids.numel(); ++i) {
    const std::int64_t id = values[i];
    if (id >= 0 && id < vocab) continue;
    const std::string expected = vocab > 0 ? "expected 0 to " + std::to_string(vocab - 1) : "the vocabulary is empty";
    throw ValueError(std::string(op) + ": ids" + position_of(i, ids.shape()) + " = " + std::to_string(id) +
                     " is outside the vocabulary: " + expected + " (vocabulary size V = " + std::to_string(vocab) +
                     ", the rows of weight)");
  }
}

}  // namespace

void check_ids(std::string_view op, const Tensor& ids, std::int64_t vocab) {
  if (ids.dtype() == DType::int32) {
    check_typed<std::int32_t>(op, ids, vocab);
  } else {
    check_typed<std::int64_t>(op, ids, vocab);
  }
}

}  // namespace tileops::embedding
