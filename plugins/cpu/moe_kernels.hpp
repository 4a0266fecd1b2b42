// The cpu plugin's router and routed experts (see norm_kernels.hpp).
#pragma once

#include "kernel_declarations.hpp"
#include "tileops/extend/ops/moe.hpp"

namespace tileops::cpu {

// Softmax or sigmoid scores in float32 and a partial sort per token row, rows over the threads.
class MoeRouteKernel final : public ops::MoERouteFwdOp::MoeRoute::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  Result forward(const Tensor& router_logits, const Tensor& correction_bias) override;
};

// Routes grouped by expert; per expert the gathered rows times its gate/up weights (OpenBLAS
// sgemm; half-precision weights converted to float32 a block of rows at a time), the
// activation, times its down weights, then each token's weighted sum: float32 from the
// gathered rows to the sum, rounded once into y, as the interface asks. Throws ValueError when a
// product's sizes exceed the 32-bit BLAS index range.
class MoeExpertsKernel final : public ops::MoEExpertsFwdOp::MoeExperts::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward(const Tensor& hidden_states, const Tensor& topk_weights, const Tensor& topk_ids,
                 const Tensor& w_gate_up, const Tensor& w_down) override;
};

}  // namespace tileops::cpu
