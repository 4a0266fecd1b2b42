#include "hopper_moe.hpp"

#include "call_support.hpp"
#include "kernel_types.hpp"
#include "moe_launchers.hpp"

namespace tileops::cuda {

std::optional<std::string> HopperMoeExpertsKernel::refusal(const Call& call) {
  if (!gpu::moe_wgmma_built()) return "this build of the cuda plugin embeds no sm_90a machine code";
  if (call.dtype != DType::float16 && call.dtype != DType::bfloat16) {
    return "serves float16 and bfloat16, not " + std::string(dtype_name(call.dtype));
  }
  return std::nullopt;
}

HopperMoeExpertsKernel::HopperMoeExpertsKernel(const Call& call)
    : Impl(call),
      faults_(gpu::faults_of(call)),
      warp_size_(gpu::warp_size_of(call)) {}

Tensor HopperMoeExpertsKernel::forward(const Tensor& hidden_states, const Tensor& topk_weights,
                                       const Tensor& topk_ids, const Tensor& w_gate_up, const Tensor& w_down) {
  return gpu::run_moe_experts(call_, faults_, warp_size_, true, hidden_states, topk_weights, topk_ids, w_gate_up,
                              w_down);
}

}  // namespace tileops::cuda
