// cuda_cublaslt_gemm: GemmFwdOp through cuBLASLt, for every transposition of float16 and
// bfloat16 (float32 accumulation and reduction) and float32 (exact by default, TF32 when
// TILEOPS_CUDA_ALLOW_TF32 allows it). Preferred over the shared decode kernel
// (cuda_dot_rows_gemm): its heuristic's choice reads the weights of decode products at 75-96%
// of the copy bandwidth on an H200 and an H100, as fast as that kernel or faster at most shapes
// measured and far ahead of it from 4 rows of a on.
//
// tileops tensors are row-major and cuBLASLt's matrices column-major: a row-major [r, c]
// matrix is a column-major [c, r] one, so d = op(a) · op(b) is computed as the column-major
// d^T = op(b)^T · op(a)^T, with b as cuBLASLt's first operand and a as its second.
//
// An entry serves one call spec (shape, transpositions, dtype, device). Building it creates
// the matmul descriptor and the three layouts and asks cuBLASLt's heuristic once for each
// alignment the operands may have (256 bytes, 16 bytes, one element); a call only picks the
// plan for its pointers' alignment and runs it: no query, no descriptor work (operands that
// no algorithm takes at their alignment are multiplied as aligned copies). A plan's
// workspace (at most 32 MiB, often none) comes from the device's stream-ordered pool on the
// call's stream for that call alone, so threads calling one entry on different streams never
// share it, and the pool serves it without the driver.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "cublaslt_api.hpp"
#include "tileops/extend/ops/gemm.hpp"

namespace tileops::cuda {

class CublasLtGemmKernel final : public ops::GemmFwdOp::Gemm::Impl<> {
 public:
  static constexpr DeviceTypes devices{"cuda"};
  static constexpr KeyList preferred_over{"cuda_dot_rows_gemm", "cuda_tiled_gemm"};
  // Refuses other dtypes, and every call when cuBLASLt cannot be loaded (saying why).
  static std::optional<std::string> refusal(const Call& call);
  // Builds the descriptors and plans; throws RuntimeError when cuBLASLt has no algorithm for
  // 256-byte-aligned operands of this call.
  explicit CublasLtGemmKernel(const Call& call);

  void forward(const Tensor& a, const Tensor& b, const Tensor& d) override;
  // "cublasLt compute=32F algo=<id> tile=<id> splitk=<n> workspace=<bytes>" of the plan for
  // 256-byte-aligned operands.
  std::optional<std::string> config() const override;

 private:
  struct Plan {
    cublasLtMatmulAlgo_t algo;
    std::size_t workspace;
  };
  struct DestroyDesc {
    void operator()(cublasLtMatmulDesc_t d) const { cublaslt().desc_destroy(d); }
  };
  struct DestroyLayout {
    void operator()(cublasLtMatrixLayout_t l) const { cublaslt().layout_destroy(l); }
  };
  using Desc = std::unique_ptr<std::remove_pointer_t<cublasLtMatmulDesc_t>, DestroyDesc>;
  using Layout = std::unique_ptr<std::remove_pointer_t<cublasLtMatrixLayout_t>, DestroyLayout>;
  static Layout make_layout(DType dtype, std::int64_t rows, std::int64_t cols);
  // Queues d = op(a) · op(b) with `plan` on `stream`.
  void run(const Plan& plan, const Tensor& a, const Tensor& b, const Tensor& d, void* stream) const;

  bool tf32_ = false;
  cublasLtHandle_t handle_ = nullptr;
  Desc desc_;
  Layout first_;   // b, as cuBLASLt's A
  Layout second_;  // a, as cuBLASLt's B
  Layout out_;     // d (and C, unread with beta = 0)
  // By the alignment all three operands have: 256 bytes, 16 bytes, one element.
  std::array<std::optional<Plan>, 3> plans_;
};

}  // namespace tileops::cuda
