#include "tileops/ops/layer_norm.hpp"

#include <array>

#include "norm/reference_kernels.hpp"

namespace tileops {

const OpClass& LayerNormFwdOp::op_class() {
  static const OpClass cls = OpClass::define("LayerNormFwdOp")
                                 .interface<LayerNormFwdInterface>("layer_norm")
                                 .kernel_type<ref::LayerNormKernel>("layer_norm_reference")
                                 .build();
  return cls;
}

LayerNormFwdOp::LayerNormFwdOp(std::vector<std::int64_t> normalized_shape, double eps, Target target)
    : Op(op_class(), {{"normalized_shape", normalized_shape}, {"eps", eps}}, std::move(target)),
      normalized_shape_(std::move(normalized_shape)),
      eps_(eps) {}

Tensor LayerNormFwdOp::operator()(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const std::array<Tensor, 3> inputs{x, weight, bias};
  return call(CallArgs(inputs)).front();
}

OpOutputs LayerNormFwdOp::forward(const CallArgs& args) {
  const Tensor x = args.inputs[0].contiguous();
  auto contiguous_or_absent = [](const Tensor& t) { return t.defined() ? t.contiguous() : t; };
  LayerNormCall call;
  call.device = x.device();
  call.n = shape_numel(normalized_shape_, "LayerNormFwdOp: parameter normalized_shape");
  call.eps = eps_;
  call.dtype = x.dtype();
  auto& kernel = kernel_for<LayerNormFwdInterface>("layer_norm", call);
  return {kernel.forward(x, contiguous_or_absent(args.inputs[1]), contiguous_or_absent(args.inputs[2]))};
}

}  // namespace tileops
