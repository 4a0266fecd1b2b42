// The cpu plugin's normalization kernels: the SIMD, multi-threaded bodies of
// kernels/cpu_kernels.hpp behind the op interfaces. Each refuses, with its reason, the calls
// it cannot serve; the in-tree reference kernels serve those.
#pragma once

#include "tileops/extend/ops/norm_kernels.hpp"
#include "tileops/ops/softmax.hpp"

namespace tileops::cpu {

// float32, float16 and bfloat16 only.
std::optional<std::string> refuse_unless_float(DType dtype);

class RMSNormKernel final : public Kernel, public RMSNormFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static std::optional<std::string> refusal(const LayerNormCall& call) { return refuse_unless_float(call.dtype); }
  explicit RMSNormKernel(const LayerNormCall& call) : call_(call) {}
  Tensor forward(const Tensor& x, const Tensor& weight) override;

 private:
  LayerNormCall call_;
};

class LayerNormKernel final : public Kernel, public LayerNormFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static std::optional<std::string> refusal(const LayerNormCall& call) { return refuse_unless_float(call.dtype); }
  explicit LayerNormKernel(const LayerNormCall& call) : call_(call) {}
  Tensor forward(const Tensor& x, const Tensor& weight, const Tensor& bias) override;

 private:
  LayerNormCall call_;
};

class SoftmaxKernel final : public Kernel, public SoftmaxFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static std::optional<std::string> refusal(const SoftmaxCall& call);
  explicit SoftmaxKernel(const SoftmaxCall& call) : call_(call) {}
  Tensor forward(const Tensor& x) override;

 private:
  SoftmaxCall call_;
};

class BatchNormTrainKernel final : public Kernel, public BatchNormTrainFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static std::optional<std::string> refusal(const BatchNormCall& call) { return refuse_unless_float(call.dtype); }
  explicit BatchNormTrainKernel(const BatchNormCall& call) : call_(call) {}
  BatchNormTrainResult forward(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                               const Tensor& weight, const Tensor& bias) override;

 private:
  BatchNormCall call_;
};

class BatchNormInferKernel final : public Kernel, public BatchNormInferFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static std::optional<std::string> refusal(const BatchNormCall& call) { return refuse_unless_float(call.dtype); }
  explicit BatchNormInferKernel(const BatchNormCall& call) : call_(call) {}
  Tensor forward(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                 const Tensor& bias) override;

 private:
  BatchNormCall call_;
};

}  // namespace tileops::cpu
