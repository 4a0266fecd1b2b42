// LayerNormFwdOp: layer normalization over the trailing `normalized_shape` axes.
#pragma once

#include <vector>

#include "tileops/op.hpp"
#include "tileops/ops/norm_kernels.hpp"

namespace tileops {

class TILEOPS_API LayerNormFwdOp final : public Op {
 public:
  // Interface "layer_norm"; in-tree kernel "layer_norm_reference" (general, cpu).
  static const OpClass& op_class();

  explicit LayerNormFwdOp(std::vector<std::int64_t> normalized_shape, double eps = 1e-5, Target target = {});

  // x: [*B, *normalized_shape]; weight, bias: [*normalized_shape] or undefined.
  Tensor operator()(const Tensor& x, const Tensor& weight = {}, const Tensor& bias = {});

  const std::vector<std::int64_t>& normalized_shape() const { return normalized_shape_; }
  double eps() const { return eps_; }

 protected:
  OpOutputs forward(const CallArgs& args) override;

 private:
  std::vector<std::int64_t> normalized_shape_;
  double eps_;
};

}  // namespace tileops
