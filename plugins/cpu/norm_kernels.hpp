// The cpu plugin's normalization and softmax kernels: the SIMD, multi-threaded bodies of
// kernels/cpu_kernels.hpp behind the op interfaces. Each refuses, with its reason, the calls
// it cannot serve; the in-tree reference kernels serve those.
#pragma once

#include "kernel_declarations.hpp"
#include "tileops/extend/ops/norm.hpp"
#include "tileops/extend/ops/softmax.hpp"

namespace tileops::cpu {

class RMSNormKernel final : public ops::RMSNormFwdOp::RmsNorm::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward(const Tensor& x, const Tensor& weight) override;
};

class FusedAddRMSNormKernel final : public ops::FusedAddRMSNormFwdOp::FusedAddRmsNorm::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward(const Tensor& x, const Tensor& residual, const Tensor& weight) override;
};

class LayerNormKernel final : public ops::LayerNormFwdOp::LayerNorm::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward(const Tensor& x, const Tensor& weight, const Tensor& bias) override;
};

// Along the last axis only.
class SoftmaxKernel final : public ops::SoftmaxFwdOp::Softmax::Impl<CpuKernel> {
 public:
  using Impl::Impl;
  static std::optional<std::string> refusal(const Call& call);
  Tensor forward(const Tensor& x) override;
};

class BatchNormTrainKernel final : public ops::BatchNormFwdOp::BatchNormFwdTrain::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  Result forward(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                 const Tensor& bias) override;
};

class BatchNormInferKernel final : public ops::BatchNormFwdOp::BatchNormFwdInfer::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                 const Tensor& bias) override;
};

}  // namespace tileops::cpu
