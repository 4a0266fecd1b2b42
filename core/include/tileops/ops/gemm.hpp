// GemmFwdOp: d = op(a) · op(b), op transposing when trans_a / trans_b. The class is generated
// from manifests/gemm.yaml; core/ops/gemm/gemm.cpp holds its forward. Its call spec and kernel
// interface:
#pragma once

#include <cstdint>
#include <string_view>
#include <tuple>

#include "tileops/extend/kernel.hpp"
#include "tileops/op.hpp"
#include "tileops/ops/gen/gemm.hpp"

namespace tileops {

struct GemmCall final : CallSpec {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  bool trans_a = false;
  bool trans_b = false;
  DType dtype = DType::float32;
  auto fields() const { return std::tie(m, n, k, trans_a, trans_b, dtype); }
};

class GemmFwdInterface : public KernelInterface {
 public:
  using Interface = GemmFwdInterface;
  using Request = GemmCall;
  static constexpr std::string_view kName = "GemmFwdInterface";

  // a: contiguous [m, k] ([k, m] when call.trans_a); b: contiguous [k, n] ([n, k] when
  // call.trans_b); d: contiguous [m, n]; all call.dtype on call.device; d shares no memory
  // with a or b. Writes d = op(a) · op(b), accumulating in at least float32.
  virtual void forward(const Tensor& a, const Tensor& b, const Tensor& d) = 0;
};

}  // namespace tileops
