#include "tileops/ops/embedding.hpp"

#include <string>

#include "common/index_check.hpp"
#include "tileops/extend/ops/embedding.hpp"

namespace tileops {

OpOutputs EmbeddingFwdOp::forward(const CallArgs& args) {
  using Embedding = ops::EmbeddingFwdOp::Embedding;
  const Tensor ids = args.inputs[0].contiguous();
  const Tensor weight = args.inputs[1].contiguous();
  if (ids.device().is_cpu()) {
    const std::int64_t vocab = weight.shape()[0];
    const std::string size = "vocabulary size V = " + std::to_string(vocab) + ", the rows of weight";
    check_indices(name(), ids, vocab, {"ids", "the vocabulary", size});
  }
  Embedding::Call call;
  call.device = weight.device();
  call.dtype = weight.dtype();
  call.index_dtype = ids.dtype();
  return outputs_of(kernel_for<Embedding>(call).forward(ids, weight));
}

}  // namespace tileops
