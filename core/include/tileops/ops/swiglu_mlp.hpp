// SwiGLUMLPFwdOp: the gated MLP of Llama-style blocks, composed of sub-ops:
// gate_up (GemmFwdOp, x · w_gate_up^T) → act (SiluAndMulFwdOp) → down (GemmFwdOp, · w_down^T).
#pragma once

#include <memory>

#include "tileops/op.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/gemm.hpp"

namespace tileops {

class TILEOPS_API SwiGLUMLPFwdOp final : public Op {
 public:
  // No kernels of its own; stages gate_up, act, down.
  static const OpClass& op_class();
  // Sub-ops built here inherit `target`; injected ones (non-null) keep their own.
  explicit SwiGLUMLPFwdOp(Target target = {}, std::shared_ptr<GemmFwdOp> gate_up = nullptr,
                          std::shared_ptr<SiluAndMulFwdOp> act = nullptr, std::shared_ptr<GemmFwdOp> down = nullptr);
  // x: [M, H]; w_gate_up: [2I, H]; w_down: [H, I]. Returns [M, H].
  Tensor operator()(const Tensor& x, const Tensor& w_gate_up, const Tensor& w_down);

 protected:
  OpOutputs forward(const CallArgs& args) override;

 private:
  GemmFwdOp* gate_up_;
  SiluAndMulFwdOp* act_;
  GemmFwdOp* down_;
};

}  // namespace tileops
