// GemmFwdOp: d = op(a) · op(b), op transposing when trans_a / trans_b.
#pragma once

#include <cstdint>
#include <string_view>
#include <tuple>

#include "tileops/kernel.hpp"
#include "tileops/op.hpp"

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

class TILEOPS_API GemmFwdOp final : public Op {
 public:
  // Interface "gemm"; in-tree kernel "gemm_reference".
  static const OpClass& op_class();
  explicit GemmFwdOp(bool trans_a = false, bool trans_b = true, Target target = {});
  Tensor operator()(const Tensor& a, const Tensor& b);
  bool trans_a() const { return trans_a_; }
  bool trans_b() const { return trans_b_; }

 protected:
  OpOutputs forward(const CallArgs& args) override;

 private:
  bool trans_a_;
  bool trans_b_;
};

}  // namespace tileops
