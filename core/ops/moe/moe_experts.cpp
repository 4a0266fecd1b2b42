#include <string>

#include "common/index_check.hpp"
#include "tileops/extend/ops/moe.hpp"
#include "tileops/ops/moe.hpp"

namespace tileops {

OpOutputs MoEExpertsFwdOp::forward(const CallArgs& args) {
  using Experts = ops::MoEExpertsFwdOp::MoeExperts;
  const Tensor x = args.inputs[0].contiguous();
  const Tensor weights = args.inputs[1].contiguous();
  const Tensor ids = args.inputs[2].contiguous();
  const Tensor w_gate_up = args.inputs[3].contiguous();
  const Tensor w_down = args.inputs[4].contiguous();
  if (ids.device().is_cpu()) {
    const std::int64_t experts = w_gate_up.shape()[0];
    const std::string size = "experts E = " + std::to_string(experts) + ", the first dim of w_gate_up";
    check_indices(name(), ids, experts, {"topk_ids", "the experts", size});
  }
  Experts::Call call;
  call.device = x.device();
  call.activation = activation() == "gelu_and_mul" ? Experts::ExpertActivation::gelu_and_mul
                                                     : Experts::ExpertActivation::silu_and_mul;
  call.dtype = x.dtype();
  return outputs_of(kernel_for<Experts>(call).forward(x, weights, ids, w_gate_up, w_down));
}

}  // namespace tileops
