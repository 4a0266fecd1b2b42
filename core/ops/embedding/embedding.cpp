#include "tileops/ops/embedding.hpp"

#include "embedding/embedding_ids.hpp"
#include "tileops/extend/ops/embedding.hpp"

namespace tileops {

OpOutputs EmbeddingFwdOp::forward(const CallArgs& args) {
  using Embedding = ops::EmbeddingFwdOp::Embedding;
  const Tensor ids = args.inputs[0].contiguous();
  const Tensor weight = args.inputs[1].contiguous();
  if (ids.device().is_cpu()) embedding::check_ids(name(), ids, weight.shape()[0]);
  Embedding::Call call;
  call.device = weight.device();
  call.dtype = weight.dtype();
  call.index_dtype = ids.dtype();
  return outputs_of(kernel_for<Embedding>(call).forward(ids, weight));
}

}  // namespace tileops
