// Call specs and kernel interfaces of the normalization ops (RMSNorm, LayerNorm, BatchNorm).
#pragma once

#include <cstdint>
#include <string_view>
#include <tuple>

#include "tileops/extend/kernel.hpp"
#include "tileops/ops/gen/norm.hpp"
#include "tileops/tensor.hpp"

namespace tileops {

// Normalization over the trailing `n` elements of each row (RMSNorm and LayerNorm).
struct LayerNormCall final : CallSpec {
  std::int64_t n = 0;
  double eps = 1e-5;
  DType dtype = DType::float32;
  auto fields() const { return std::tie(n, eps, dtype); }
};

class RMSNormFwdInterface : public KernelInterface {
 public:
  using Interface = RMSNormFwdInterface;
  using Request = LayerNormCall;
  static constexpr std::string_view kName = "RMSNormFwdInterface";

  // y = x / sqrt(mean(x^2) + eps) * weight over each run of `call.n` trailing elements.
  // x: contiguous, call.dtype, on call.device, numel a multiple of call.n (rows = numel / n).
  // weight: contiguous [call.n] in call.dtype, or undefined (no scale).
  // Returns a new contiguous tensor shaped like x in call.dtype; writes nothing in place.
  // Accumulation is at least float32.
  virtual Tensor forward(const Tensor& x, const Tensor& weight) = 0;
};

class LayerNormFwdInterface : public KernelInterface {
 public:
  using Interface = LayerNormFwdInterface;
  using Request = LayerNormCall;
  static constexpr std::string_view kName = "LayerNormFwdInterface";

  // y = (x - mean) / sqrt(var + eps) * weight + bias over each run of `call.n` trailing
  // elements, with the biased variance. x: contiguous, call.dtype, on call.device.
  // weight, bias: contiguous [call.n] in call.dtype, each possibly undefined.
  // Returns a new contiguous tensor shaped like x; writes nothing in place.
  virtual Tensor forward(const Tensor& x, const Tensor& weight, const Tensor& bias) = 0;
};

// Batch normalization of x viewed as [N, C, inner] per channel.
struct BatchNormCall final : CallSpec {
  std::int64_t channels = 0;
  double eps = 1e-5;
  double momentum = 0.1;
  DType dtype = DType::float32;
  auto fields() const { return std::tie(channels, eps, momentum, dtype); }
};

// The outputs of training-mode batch normalization, as BatchNormFwdOp returns them: y; mean,
// [C] float32, the batch mean; rstd, [C] float32, 1 / sqrt(batch biased variance + eps).
using BatchNormTrainResult = BatchNormFwdOutputs;

class BatchNormTrainFwdInterface : public KernelInterface {
 public:
  using Interface = BatchNormTrainFwdInterface;
  using Request = BatchNormCall;
  static constexpr std::string_view kName = "BatchNormTrainFwdInterface";

  // Normalizes x ([N, C, *S], contiguous, call.dtype, call.device) with the statistics of this
  // batch per channel. running_mean and running_var ([C] float32, contiguous) are updated in
  // place: running = (1 - momentum) * running + momentum * batch statistic, with the unbiased
  // variance. weight and bias ([C] call.dtype) may be undefined. Returns new y (like x), mean
  // and rstd.
  virtual BatchNormTrainResult forward(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                                       const Tensor& weight, const Tensor& bias) = 0;
};

class BatchNormInferFwdInterface : public KernelInterface {
 public:
  using Interface = BatchNormInferFwdInterface;
  using Request = BatchNormCall;
  static constexpr std::string_view kName = "BatchNormInferFwdInterface";

  // Normalizes x ([N, C, *S], contiguous, call.dtype) with running_mean and running_var ([C]
  // float32), read only. weight and bias ([C] call.dtype) may be undefined. Returns new y.
  virtual Tensor forward(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                         const Tensor& weight, const Tensor& bias) = 0;
};

}  // namespace tileops
