// cuda_mma_dot_rows_gemm: GemmFwdOp for decode products (m <= 8 rows of a against weights b
// stored [n, k]) in float16 and bfloat16 on tensor cores, float32 accumulation. Reads b once
// at the memory's rate without spending a CUDA-core instruction per multiply-add, which the
// shared dot_rows kernel (cuda_dot_rows_gemm) does and which limits it past one row of a.
// Preferred over that kernel and over cuda_cublaslt_gemm where it serves; operands that are
// not 16-byte aligned (views at odd offsets) go to the shared kernel.
#pragma once

#include <optional>
#include <string>

#include "tileops/ops/gemm.hpp"

namespace tileops::cuda {

class MmaDotRowsGemmKernel final : public Kernel, public GemmFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cuda"};
  static constexpr KeyList preferred_over{"cuda_dot_rows_gemm", "cuda_cublaslt_gemm"};
  // Refuses other dtypes, more than 8 rows, other transpositions, k not a multiple of 8 and
  // devices before compute capability 8.0 (mma.sync with bfloat16 operands): the call's arch,
  // else its device's.
  static std::optional<std::string> refusal(const GemmCall& call);
  explicit MmaDotRowsGemmKernel(const GemmCall& call);
  void forward(const Tensor& a, const Tensor& b, const Tensor& d) override;

 private:
  GemmCall call_;
  int sm_count_;
};

}  // namespace tileops::cuda
