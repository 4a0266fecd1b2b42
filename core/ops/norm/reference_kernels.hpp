// The portable reference kernels of the normalization ops: general implementations on the
// cpu, plain loops accumulating in double. They serve every call no faster kernel serves and
// are the numerical oracle of the tests.
#pragma once

#include "tileops/extend/ops/norm_kernels.hpp"

namespace tileops::ref {

class RMSNormKernel final : public Kernel, public RMSNormFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr bool general = true;
  explicit RMSNormKernel(const LayerNormCall& call) : call_(call) {}
  Tensor forward(const Tensor& x, const Tensor& weight) override;

 private:
  LayerNormCall call_;
};

class LayerNormKernel final : public Kernel, public LayerNormFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr bool general = true;
  explicit LayerNormKernel(const LayerNormCall& call) : call_(call) {}
  Tensor forward(const Tensor& x, const Tensor& weight, const Tensor& bias) override;

 private:
  LayerNormCall call_;
};

class BatchNormTrainKernel final : public Kernel, public BatchNormTrainFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr bool general = true;
  explicit BatchNormTrainKernel(const BatchNormCall& call) : call_(call) {}
  BatchNormTrainResult forward(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                               const Tensor& weight, const Tensor& bias) override;

 private:
  BatchNormCall call_;
};

class BatchNormInferKernel final : public Kernel, public BatchNormInferFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr bool general = true;
  explicit BatchNormInferKernel(const BatchNormCall& call) : call_(call) {}
  Tensor forward(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                 const Tensor& bias) override;

 private:
  BatchNormCall call_;
};

}  // namespace tileops::ref
