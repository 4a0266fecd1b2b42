#include "embedding_kernels.hpp"

#include "cpu_kernels.hpp"

namespace tileops::cpu {

Tensor EmbeddingKernel::forward(const Tensor& ids, const Tensor& weight) {
  const std::int64_t vocab = weight.shape()[0], hidden = weight.shape()[1];
  Shape shape = ids.shape();
  shape.push_back(hidden);
  Tensor y = Tensor::empty(shape, weight.dtype(), weight.device());
  embedding(call_.dtype, call_.index_dtype, ids.numel(), vocab, hidden, ids.data_ptr(), weight.data_ptr(),
            y.data_ptr());
  return y;
}

}  // namespace tileops::cpu
