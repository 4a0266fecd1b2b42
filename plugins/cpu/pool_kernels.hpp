// The cpu plugin's 2-D pooling (see norm_kernels.hpp): the window's rows reduced with vectors
// along the input's width, the output rows of every plane split over the threads.
#pragma once

#include "kernel_declarations.hpp"
#include "tileops/extend/ops/pool.hpp"

namespace tileops::cpu {

class MaxPool2dKernel final : public ops::MaxPool2dFwdOp::MaxPool2d::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  void forward(const Tensor& x, const Tensor& y) override;
};

class AvgPool2dKernel final : public ops::AvgPool2dFwdOp::AvgPool2d::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  void forward(const Tensor& x, const Tensor& y) override;
};

}  // namespace tileops::cpu
