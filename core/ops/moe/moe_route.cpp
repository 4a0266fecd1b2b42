#include "tileops/extend/ops/moe.hpp"
#include "tileops/ops/moe.hpp"

namespace tileops {

OpOutputs MoERouteFwdOp::forward(const CallArgs& args) {
  using Route = ops::MoERouteFwdOp::MoeRoute;
  const Tensor logits = args.inputs[0].contiguous();
  const Tensor bias = args.inputs[1].defined() ? args.inputs[1].contiguous() : args.inputs[1];
  Route::Call call;
  call.device = logits.device();
  call.top_k = top_k();
  call.sigmoid = scoring_func() == "sigmoid";
  call.renormalize = renormalize();
  call.scale = routed_scaling_factor();
  call.dtype = logits.dtype();
  auto [weights, ids] = kernel_for<Route>(call).forward(logits, bias);
  return outputs_of(std::move(weights), std::move(ids));
}

}  // namespace tileops
