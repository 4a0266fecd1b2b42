#include "embedding_reference.hpp"

#include <cstring>

namespace tileops::ref {

Tensor EmbeddingFwdOp::Embedding::forward(const Tensor& ids, const Tensor& weight) {
  const std::int64_t hidden = weight.shape()[1];
  Shape shape = ids.shape();
  shape.push_back(hidden);
  Tensor y = Tensor::empty(shape, weight.dtype(), weight.device());
  const std::size_t row_bytes = static_cast<std::size_t>(hidden) * dtype_size(weight.dtype());
  const auto* table = static_cast<const std::byte*>(weight.data_ptr());
  auto* out = static_cast<std::byte*>(y.data_ptr());
  for (std::int64_t i = 0; i < ids.numel(); ++i) {
    const std::int64_t id = ids.dtype() == DType::int32 ? ids.data<std::int32_t>()[i] : ids.data<std::int64_t>()[i];
    std::memcpy(out + static_cast<std::size_t>(i) * row_bytes, table + static_cast<std::size_t>(id) * row_bytes,
                row_bytes);
  }
  return y;
}

}  // namespace tileops::ref
