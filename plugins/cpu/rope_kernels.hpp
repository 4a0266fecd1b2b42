// The cpu plugin's RoPE family kernels (see norm_kernels.hpp): one threaded loop serves both
// forms and layouts; each sequence index's angles are computed once for all its heads.
#pragma once

#include "kernel_declarations.hpp"
#include "tileops/extend/ops/rope.hpp"

namespace tileops::cpu {

class RopeKernel final : public ops::RopeFwdOp::Rope::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward(const Tensor& x, const Tensor& positions, const Tensor& factors) override;
};

class RopeInterleavedKernel final : public ops::RopeInterleavedFwdOp::Rope::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward(const Tensor& x, const Tensor& positions, const Tensor& factors) override;
};

// Picks the long factors when the largest position + 1 (else the sequence axis) exceeds
// call.original_max_positions, as the interface asks.
class LongRopeKernel final : public ops::LongRoPEFwdOp::Rope::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward(const Tensor& x, const Tensor& positions, const Tensor& short_factor,
                 const Tensor& long_factor) override;
};

}  // namespace tileops::cpu
