#include "tileops/ops/rope.hpp"

#include "rope_call.hpp"
#include "tileops/extend/ops/rope.hpp"

namespace tileops {

OpOutputs RopeFwdOp::forward(const CallArgs& args) {
  using Rope = ops::RopeFwdOp::Rope;
  const Tensor x = args.inputs[0].contiguous();
  const Rope::Call call = rope_detail::rope_call<Rope::Call>(x, *this, Rope::RopeForm::neox);
  return outputs_of(kernel_for<Rope>(call).forward(x, rope_detail::contiguous_positions(args.inputs[1]), Tensor()));
}

OpOutputs RopeInterleavedFwdOp::forward(const CallArgs& args) {
  using Rope = ops::RopeInterleavedFwdOp::Rope;
  const Tensor x = args.inputs[0].contiguous();
  const Rope::Call call = rope_detail::rope_call<Rope::Call>(x, *this, Rope::RopeForm::interleaved);
  return outputs_of(kernel_for<Rope>(call).forward(x, rope_detail::contiguous_positions(args.inputs[1]), Tensor()));
}

}  // namespace tileops
