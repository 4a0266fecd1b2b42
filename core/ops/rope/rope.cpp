#include "tileops/ops/rope.hpp"

#include "rope/reference_kernels.hpp"

namespace tileops {

const OpClass& RopeFwdOp::op_class() {
  static const OpClass cls = OpClass::define("RopeFwdOp")
                                 .interface<RopeFwdInterface>("rope")
                                 .kernel_type<ref::RopeKernel>("rope_reference")
                                 .build();
  return cls;
}

OpOutputs RopeFwdOp::forward(const CallArgs& args) {
  const Tensor x = args.inputs[0].contiguous();
  const Tensor positions = args.inputs[1].defined() ? args.inputs[1].contiguous() : args.inputs[1];
  RopeCall call;
  call.device = x.device();
  call.head_dim = x.shape()[3];
  call.theta = theta();
  call.dtype = x.dtype();
  return {kernel_for<RopeFwdInterface>("rope", call).forward(x, positions)};
}

}  // namespace tileops
