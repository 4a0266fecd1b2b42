// RMSNormFwdOp: root-mean-square normalization over the trailing `normalized_shape` axes.
#pragma once

#include <optional>
#include <vector>

#include "tileops/op.hpp"
#include "tileops/ops/norm_kernels.hpp"

namespace tileops {

class TILEOPS_API RMSNormFwdOp final : public Op {
 public:
  // Interface "rms_norm"; in-tree kernel "rms_norm_reference" (general, cpu).
  static const OpClass& op_class();

  // eps: nullopt uses the machine epsilon of the call's dtype.
  explicit RMSNormFwdOp(std::vector<std::int64_t> normalized_shape, std::optional<double> eps = std::nullopt,
                        Target target = {});

  // x: [*B, *normalized_shape]; weight: [*normalized_shape] or undefined. Returns y like x.
  Tensor operator()(const Tensor& x, const Tensor& weight = {});

  const std::vector<std::int64_t>& normalized_shape() const { return normalized_shape_; }
  std::optional<double> eps() const { return eps_; }

 protected:
  OpOutputs forward(const CallArgs& args) override;

 private:
  std::vector<std::int64_t> normalized_shape_;
  std::optional<double> eps_;
};

// The machine epsilon of a floating dtype (the gap between 1 and the next value).
TILEOPS_API double dtype_epsilon(DType dtype);

}  // namespace tileops
