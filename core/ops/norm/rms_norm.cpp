#include "tileops/ops/rms_norm.hpp"

#include "tileops/extend/ops/norm.hpp"

namespace tileops {

OpOutputs RMSNormFwdOp::forward(const CallArgs& args) {
  Tensor x_copy, weight_copy;
  const Tensor& x = args.inputs[0].contiguous(x_copy);
  const Tensor& weight = args.inputs[1].defined() ? args.inputs[1].contiguous(weight_copy) : args.inputs[1];
  ops::RMSNormFwdOp::RmsNorm::Call call;
  call.device = x.device();
  call.n = shape_numel(normalized_shape(), "RMSNormFwdOp: parameter normalized_shape");
  call.eps = eps() ? *eps() : dtype_epsilon(x.dtype());
  call.dtype = x.dtype();
  auto& kernel = kernel_for<ops::RMSNormFwdOp::RmsNorm>(call);
  return outputs_of(kernel.forward(x, weight));
}

}  // namespace tileops
