#include "tileops/ops/layer_norm.hpp"

#include "tileops/extend/ops/norm.hpp"

namespace tileops {

OpOutputs LayerNormFwdOp::forward(const CallArgs& args) {
  const Tensor x = args.inputs[0].contiguous();
  auto contiguous_or_absent = [](const Tensor& t) { return t.defined() ? t.contiguous() : t; };
  ops::LayerNormFwdOp::LayerNorm::Call call;
  call.device = x.device();
  call.n = shape_numel(normalized_shape(), "LayerNormFwdOp: parameter normalized_shape");
  call.eps = eps();
  call.dtype = x.dtype();
  auto& kernel = kernel_for<ops::LayerNormFwdOp::LayerNorm>(call);
  return outputs_of(kernel.forward(x, contiguous_or_absent(args.inputs[1]), contiguous_or_absent(args.inputs[2])));
}

}  // namespace tileops
