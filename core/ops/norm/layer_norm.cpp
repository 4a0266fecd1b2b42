#include "tileops/ops/layer_norm.hpp"


#include "norm/reference_kernels.hpp"

namespace tileops {

const OpClass& LayerNormFwdOp::op_class() {
  static const OpClass cls = OpClass::define("LayerNormFwdOp")
                                 .interface<LayerNormFwdInterface>("layer_norm")
                                 .kernel_type<ref::LayerNormKernel>("layer_norm_reference")
                                 .build();
  return cls;
}

OpOutputs LayerNormFwdOp::forward(const CallArgs& args) {
  const Tensor x = args.inputs[0].contiguous();
  auto contiguous_or_absent = [](const Tensor& t) { return t.defined() ? t.contiguous() : t; };
  LayerNormCall call;
  call.device = x.device();
  call.n = shape_numel(normalized_shape(), "LayerNormFwdOp: parameter normalized_shape");
  call.eps = eps();
  call.dtype = x.dtype();
  auto& kernel = kernel_for<LayerNormFwdInterface>("layer_norm", call);
  return {kernel.forward(x, contiguous_or_absent(args.inputs[1]), contiguous_or_absent(args.inputs[2]))};
}

}  // namespace tileops
