// cuda_moe_experts_sm90: the routed experts with their grouped GEMMs on Hopper's warpgroup MMA
// (compute capability 9.0), preferred over the shared cuda_moe_experts, whose mma.sync GEMMs
// reach about half of what torch._grouped_mm does on an H200 at Mixtral-8x7B prefill. It serves
// float16 and bfloat16 and runs the same steps as cuda_moe_experts, the two products on wgmma
// where the tensor cores serve (moe_mma_shapes); calls they don't serve (decode: few routes per
// expert) run the GEMVs as cuda_moe_experts would. A build without sm_90a machine code
// (TILEOPS_CUDA_ARCHS without 90a) refuses every call, saying so.
#pragma once

#include <optional>
#include <string>

#include "fault_record.hpp"
#include "tileops/extend/ops/moe.hpp"

namespace tileops::cuda {

class HopperMoeExpertsKernel final : public ops::MoEExpertsFwdOp::MoeExperts::Impl<> {
 public:
  static constexpr DeviceTypes devices{"cuda"};
  static constexpr ArchList supported_archs{90};
  static constexpr KeyList preferred_over{"cuda_moe_experts"};
  static std::optional<std::string> refusal(const Call& call);
  explicit HopperMoeExpertsKernel(const Call& call);

  Tensor forward(const Tensor& hidden_states, const Tensor& topk_weights, const Tensor& topk_ids,
                 const Tensor& w_gate_up, const Tensor& w_down) override;

 private:
  gpu::FaultRecord* faults_;
  int warp_size_;
};

}  // namespace tileops::cuda
