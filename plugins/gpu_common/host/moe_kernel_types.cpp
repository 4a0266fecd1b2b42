// MoERouteFwdOp and MoEExpertsFwdOp on the GPU.
#include "call_support.hpp"
#include "kernel_types.hpp"
#include "moe_launchers.hpp"

namespace tileops::gpu {

MoeRouteKernel::MoeRouteKernel(const Call& call) : Impl(call), warp_size_(warp_size_of(call)) {}

MoeRouteKernel::Result MoeRouteKernel::forward(const Tensor& router_logits, const Tensor& correction_bias) {
  DeviceGuard on(router_logits.device().index());
  const std::int64_t rows = router_logits.shape()[0];
  Result r{Tensor::empty({rows, call_.top_k}, DType::float32, router_logits.device()),
           Tensor::empty({rows, call_.top_k}, DType::int32, router_logits.device())};
  launch_moe_route({router_logits.data_ptr(), router_logits.dtype(),
                    correction_bias.defined() ? correction_bias.data<float>() : nullptr, r.topk_weights.data<float>(),
                    r.topk_ids.data<std::int32_t>(), rows, router_logits.shape()[1], call_.top_k, call_.sigmoid,
                    call_.renormalize, static_cast<float>(call_.scale), warp_size_},
                   stream_of(router_logits));
  return r;
}

MoeExpertsKernel::MoeExpertsKernel(const Call& call)
    : Impl(call),
      faults_(faults_of(call)),
      warp_size_(warp_size_of(call)) {}

Tensor run_moe_experts(const ops::MoEExpertsFwdOp::MoeExperts::Call& call, FaultRecord* faults, int warp_size,
                       bool hopper, const Tensor& hidden_states, const Tensor& topk_weights, const Tensor& topk_ids,
                       const Tensor& w_gate_up, const Tensor& w_down) {
  runtime()->raise_pending_fault(hidden_states.device().index());
  DeviceGuard on(hidden_states.device().index());
  const std::int64_t rows = hidden_states.shape()[0];
  const std::int64_t hidden = hidden_states.shape()[1];
  const std::int64_t top_k = topk_ids.shape()[1];
  const std::int64_t experts = w_gate_up.shape()[0];
  const std::int64_t inter = w_down.shape()[2];
  Tensor y = Tensor::empty({rows, hidden}, hidden_states.dtype(), hidden_states.device());
  const Tensor workspace = Tensor::empty({moe_experts_workspace_bytes(rows * top_k, experts, hidden, inter)},
                                         DType::uint8, hidden_states.device());
  launch_moe_experts({hidden_states.data_ptr(), topk_weights.data<float>(), topk_ids.data<std::int32_t>(),
                      w_gate_up.data_ptr(), w_down.data_ptr(), y.data_ptr(), workspace.data_ptr(),
                      hidden_states.dtype(), rows, top_k, experts, hidden, inter,
                      call.activation == ops::MoEExpertsFwdOp::MoeExperts::ExpertActivation::gelu_and_mul, faults,
                      warp_size, hopper},
                     stream_of(hidden_states));
  return y;
}

Tensor MoeExpertsKernel::forward(const Tensor& hidden_states, const Tensor& topk_weights, const Tensor& topk_ids,
                                 const Tensor& w_gate_up, const Tensor& w_down) {
  return run_moe_experts(call_, faults_, warp_size_, false, hidden_states, topk_weights, topk_ids, w_gate_up, w_down);
}

}  // namespace tileops::gpu
