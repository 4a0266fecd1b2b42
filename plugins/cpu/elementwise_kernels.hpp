// The cpu plugin's elementwise, GEMM, reduction and ALiBi kernels (see norm_kernels.hpp).
#pragma once

#include "tileops/extend/ops/elementwise_kernels.hpp"
#include "tileops/ops/gemm.hpp"
#include "tileops/ops/reduction.hpp"

namespace tileops::cpu {

class SiluAndMulKernel final : public Kernel, public SiluAndMulFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static std::optional<std::string> refusal(const ElementwiseCall& call);
  explicit SiluAndMulKernel(const ElementwiseCall& call) : dtype_(call.dtype) {}
  Tensor forward(const Tensor& x) override;

 private:
  DType dtype_;
};

// Same-shape and row-broadcast additions; general broadcasts go to the reference.
class AddKernel final : public Kernel, public AddFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static std::optional<std::string> refusal(const AddCall& call);
  explicit AddKernel(const AddCall& call) : call_(call) {}
  void forward(const Tensor& a, const Tensor& b, double alpha, const Tensor& out) override;

 private:
  AddCall call_;
};

class ReluKernel final : public Kernel, public ReluFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static std::optional<std::string> refusal(const ElementwiseCall& call);
  explicit ReluKernel(const ElementwiseCall& call) : dtype_(call.dtype) {}
  void forward(const Tensor& x, const Tensor& out) override;

 private:
  DType dtype_;
};

class AlibiKernel final : public Kernel, public AlibiFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static std::optional<std::string> refusal(const AlibiCall& call);
  explicit AlibiKernel(const AlibiCall& call) : call_(call) {}
  Tensor forward() override;

 private:
  AlibiCall call_;
};

// GEMM through OpenBLAS; one kernel per (dtype, transposition), whatever the shape.
class BlasGemmKernel final : public Kernel, public GemmFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static std::optional<std::string> refusal(const GemmCall& call);
  static Entry entry_for(const GemmCall& call);
  explicit BlasGemmKernel(const GemmCall& call) : call_(call) {}
  void forward(const Tensor& a, const Tensor& b, const Tensor& d) override;

 private:
  GemmCall call_;
};

// Half-precision GEMM with at most kMaxDotRows rows of a and b stored [n, k] (decode-sized
// products with linear-layer weights): reads b once, converting it in registers.
class DotRowsGemmKernel final : public Kernel, public GemmFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr KeyList preferred_over{"cpu_blas_gemm"};
  static std::optional<std::string> refusal(const GemmCall& call);
  static Entry entry_for(const GemmCall& call);
  explicit DotRowsGemmKernel(const GemmCall& call) : dtype_(call.dtype) {}
  void forward(const Tensor& a, const Tensor& b, const Tensor& d) override;

 private:
  DType dtype_;
};

class SumKernel final : public Kernel, public SumFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static std::optional<std::string> refusal(const ReduceCall& call);
  explicit SumKernel(const ReduceCall& call) : call_(call) {}
  void forward(const Tensor& x, const Tensor& y, const ReduceExtents& extents) override;

 private:
  ReduceCall call_;
};

class ProdKernel final : public Kernel, public ProdFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static std::optional<std::string> refusal(const ReduceCall& call);
  explicit ProdKernel(const ReduceCall& call) : call_(call) {}
  void forward(const Tensor& x, const Tensor& y, const ReduceExtents& extents) override;

 private:
  ReduceCall call_;
};

}  // namespace tileops::cpu
