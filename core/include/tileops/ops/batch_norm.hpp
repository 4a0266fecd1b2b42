// BatchNormFwdOp: batch normalization; training and inference are two kernel interfaces,
// chosen by the construction parameter `training`.
#pragma once

#include "tileops/op.hpp"
#include "tileops/ops/norm_kernels.hpp"

namespace tileops {

class TILEOPS_API BatchNormFwdOp final : public Op {
 public:
  // Interfaces "batch_norm_fwd_train" and "batch_norm_fwd_infer"; in-tree kernels
  // "batch_norm_train_reference" and "batch_norm_infer_reference" (general, cpu).
  static const OpClass& op_class();

  explicit BatchNormFwdOp(bool training = false, double momentum = 0.1, double eps = 1e-5, Target target = {});

  // x: [N, C, *S]; running_mean, running_var: [C] float32 (updated in place when training);
  // weight, bias: [C] or undefined. Returns {y, mean, rstd}; mean and rstd are undefined in
  // inference.
  BatchNormTrainResult operator()(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                                  const Tensor& weight = {}, const Tensor& bias = {});

  bool training() const { return training_; }
  double momentum() const { return momentum_; }
  double eps() const { return eps_; }

 protected:
  OpOutputs forward(const CallArgs& args) override;

 private:
  bool training_;
  double momentum_;
  double eps_;
};

}  // namespace tileops
