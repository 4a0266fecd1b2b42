#include "tileops/extend/identity.hpp"
#include "tileops/ops/moe.hpp"

namespace tileops {

void FusedMoEFwdOp::hold_stages(std::shared_ptr<MoERouteFwdOp> route, std::shared_ptr<MoEExpertsFwdOp> experts) {
  if (route) check_injected_parameter("route");
  if (experts) check_injected_parameter("experts");
  route_ = &delegate_for<MoERouteFwdOp>("route", Identity(), std::move(route), top_k(), scoring_func(), renormalize(),
                                        routed_scaling_factor());
  experts_ = &delegate_for<MoEExpertsFwdOp>("experts", Identity(), std::move(experts), activation());
}

OpOutputs FusedMoEFwdOp::forward(const CallArgs& args) {
  const auto [weights, ids] = (*route_)(args.inputs[1], args.inputs[4]);
  return outputs_of((*experts_)(args.inputs[0], weights, ids, args.inputs[2], args.inputs[3]));
}

void FusedMoESharedExpertFwdOp::hold_stages(std::shared_ptr<MoERouteFwdOp> route,
                                            std::shared_ptr<MoEExpertsFwdOp> experts,
                                            std::shared_ptr<SwiGLUMLPFwdOp> shared, std::shared_ptr<AddFwdOp> add) {
  if (route) check_injected_parameter("route");
  if (experts) check_injected_parameter("experts");
  if (shared) check_injected_parameter("shared");
  if (add) check_injected_parameter("add");
  route_ = &delegate_for<MoERouteFwdOp>("route", Identity(), std::move(route), top_k(), scoring_func(), renormalize(),
                                        routed_scaling_factor());
  experts_ = &delegate_for<MoEExpertsFwdOp>("experts", Identity(), std::move(experts), activation());
  shared_ = &delegate_for<SwiGLUMLPFwdOp>("shared", Identity(), std::move(shared));
  add_ = &delegate_for<AddFwdOp>("add", Identity(), std::move(add), std::int64_t{1});
}

OpOutputs FusedMoESharedExpertFwdOp::forward(const CallArgs& args) {
  const auto [weights, ids] = (*route_)(args.inputs[1], args.inputs[6]);
  const Tensor routed = (*experts_)(args.inputs[0], weights, ids, args.inputs[2], args.inputs[3]);
  const Tensor shared = (*shared_)(args.inputs[0], args.inputs[4], args.inputs[5]);
  return outputs_of((*add_)(routed, shared));
}

}  // namespace tileops
