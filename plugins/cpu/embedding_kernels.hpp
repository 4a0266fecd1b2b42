// The cpu plugin's embedding lookup (see norm_kernels.hpp).
#pragma once

#include "kernel_declarations.hpp"
#include "tileops/extend/ops/embedding.hpp"

namespace tileops::cpu {

// Rows copied bitwise, split over the threads, for int32 and int64 ids.
class EmbeddingKernel final : public ops::EmbeddingFwdOp::Embedding::Impl<CpuFloatKernel> {
 public:
  using Impl::Impl;
  Tensor forward(const Tensor& ids, const Tensor& weight) override;
};

}  // namespace tileops::cpu
