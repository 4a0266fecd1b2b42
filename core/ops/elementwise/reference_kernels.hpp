// The portable reference kernels of the elementwise ops (general, cpu, plain loops).
#pragma once

#include "tileops/extend/ops/elementwise_kernels.hpp"

namespace tileops::ref {

class SiluAndMulKernel final : public Kernel, public SiluAndMulFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr bool general = true;
  explicit SiluAndMulKernel(const ElementwiseCall&) {}
  Tensor forward(const Tensor& x) override;
};

class AddKernel final : public Kernel, public AddFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr bool general = true;
  explicit AddKernel(const AddCall&) {}
  void forward(const Tensor& a, const Tensor& b, double alpha, const Tensor& out) override;
};

class ReluKernel final : public Kernel, public ReluFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr bool general = true;
  explicit ReluKernel(const ElementwiseCall&) {}
  void forward(const Tensor& x, const Tensor& out) override;
};

class AlibiKernel final : public Kernel, public AlibiFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr bool general = true;
  explicit AlibiKernel(const AlibiCall& call) : call_(call) {}
  Tensor forward() override;

 private:
  AlibiCall call_;
};

// out = gelu(x), computed in double, over contiguous x and out of one dtype (float16, bfloat16
// or float32; TypeError otherwise) and equal element count; out may be x. gelu(x) = x * Phi(x),
// Phi the standard normal distribution function, or with tanh_approximation
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). NaN stays NaN, +inf gives +inf and -inf
// gives -0, the limits.
void gelu_reference(bool tanh_approximation, const Tensor& x, const Tensor& out);

}  // namespace tileops::ref
