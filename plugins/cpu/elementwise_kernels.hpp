// The cpu plugin's elementwise, GEMM, reduction and ALiBi kernels (see norm_kernels.hpp).
#pragma once

#include "kernel_declarations.hpp"
#include "tileops/extend/ops/elementwise.hpp"
#include "tileops/extend/ops/gemm.hpp"
#include "tileops/extend/ops/reduction.hpp"

namespace tileops::cpu {

class SiluAndMulKernel final : public ops::SiluAndMulFwdOp::SiluAndMul::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward(const Tensor& x) override;
};

class GeluAndMulKernel final : public ops::GeluAndMulFwdOp::GeluAndMul::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward(const Tensor& x) override;
};

// Same-shape and row-broadcast additions; general broadcasts go to the reference.
class AddKernel final : public ops::AddFwdOp::Add::Impl<CpuKernel> {
 public:
  using Impl::Impl;
  static std::optional<std::string> refusal(const Call& call);
  void forward(const Tensor& a, const Tensor& b, double alpha, const Tensor& out) override;
};

class ReluKernel final : public ops::ReluFwdOp::Relu::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  void forward(const Tensor& x, const Tensor& out) override;
};

class GeluKernel final : public ops::GeluFwdOp::Gelu::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  void forward(const Tensor& x, const Tensor& out) override;
};

class AlibiKernel final : public ops::AlibiFwdOp::Alibi::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward() override;
};

// GEMM through OpenBLAS; one kernel per (dtype, transposition), whatever the shape.
class BlasGemmKernel final : public ops::GemmFwdOp::Gemm::Impl<CpuKernel> {
 public:
  using Impl::Impl;
  static std::optional<std::string> refusal(const Call& call);
  static Entry entry_for(const Call& call);
  void forward(const Tensor& a, const Tensor& b, const Tensor& d) override;
};

// Half-precision GEMM with at most kMaxDotRows rows of a and b stored [n, k] (decode-sized
// products with linear-layer weights): reads b once, converting it in registers.
class DotRowsGemmKernel final : public ops::GemmFwdOp::Gemm::Impl<CpuKernel> {
 public:
  using Impl::Impl;
  static constexpr KeyList preferred_over{"cpu_blas_gemm"};
  static std::optional<std::string> refusal(const Call& call);
  static Entry entry_for(const Call& call);
  void forward(const Tensor& a, const Tensor& b, const Tensor& d) override;
};

enum class Reduction { sum, prod, mean };

// Sum, product and mean over the middle axis of [outer, reduce, inner].
template <Reduction kKind, class Interface>
class ReduceKernel final : public Interface::template Impl<CpuKernel> {
 public:
  using Interface::template Impl<CpuKernel>::Impl;
  static std::optional<std::string> refusal(const typename Interface::Call& call);
  void forward(const Tensor& x, const Tensor& y, std::int64_t outer, std::int64_t reduce, std::int64_t inner) override;
};
using SumKernel = ReduceKernel<Reduction::sum, ops::SumFwdOp::Sum>;
using ProdKernel = ReduceKernel<Reduction::prod, ops::ProdFwdOp::Prod>;
using MeanKernel = ReduceKernel<Reduction::mean, ops::MeanFwdOp::Mean>;

}  // namespace tileops::cpu
