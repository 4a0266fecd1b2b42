#include "tileops/ops/rms_norm.hpp"

#include <limits>

#include "tileops/extend/ops/norm.hpp"

namespace tileops {

double dtype_epsilon(DType dtype) {
  switch (dtype) {
    case DType::float16: return 0.0009765625;       // 2^-10
    case DType::bfloat16: return 0.0078125;         // 2^-7
    case DType::float64: return std::numeric_limits<double>::epsilon();
    default: return std::numeric_limits<float>::epsilon();
  }
}

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
