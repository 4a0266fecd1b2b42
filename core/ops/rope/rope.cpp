#include "tileops/ops/rope.hpp"

#include "tileops/extend/ops/rope.hpp"

namespace tileops {

OpOutputs RopeFwdOp::forward(const CallArgs& args) {
  const Tensor x = args.inputs[0].contiguous();
  const Tensor positions = args.inputs[1].defined() ? args.inputs[1].contiguous() : args.inputs[1];
  ops::RopeFwdOp::Rope::Call call;
  call.device = x.device();
  call.head_dim = x.shape()[3];
  call.theta = theta();
  call.dtype = x.dtype();
  return outputs_of(kernel_for<ops::RopeFwdOp::Rope>(call).forward(x, positions));
}

}  // namespace tileops
