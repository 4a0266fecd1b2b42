// SoftmaxFwdOp: softmax along one axis.
#pragma once

#include <cstdint>
#include <string_view>
#include <tuple>

#include "tileops/kernel.hpp"
#include "tileops/op.hpp"

namespace tileops {

// x viewed as [outer, n, inner], softmax along the middle axis.
struct SoftmaxCall final : CallSpec {
  std::int64_t n = 0;
  std::int64_t inner = 1;
  DType dtype = DType::float32;
  auto fields() const { return std::tie(n, inner, dtype); }
};

class SoftmaxFwdInterface : public KernelInterface {
 public:
  using Interface = SoftmaxFwdInterface;
  using Request = SoftmaxCall;
  static constexpr std::string_view kName = "SoftmaxFwdInterface";

  // x: contiguous, call.dtype, call.device, numel a multiple of call.n * call.inner, viewed as
  // [outer, call.n, call.inner]. Returns a new contiguous tensor shaped like x holding
  // exp(x - max) / sum(exp(x - max)) along the middle axis (numerically stable).
  virtual Tensor forward(const Tensor& x) = 0;
};

class TILEOPS_API SoftmaxFwdOp final : public Op {
 public:
  // Interface "softmax"; in-tree kernel "softmax_reference".
  static const OpClass& op_class();
  explicit SoftmaxFwdOp(std::int64_t dim = -1, Target target = {});
  Tensor operator()(const Tensor& x);
  std::int64_t dim() const { return dim_; }

 protected:
  OpOutputs forward(const CallArgs& args) override;

 private:
  std::int64_t dim_;
};

}  // namespace tileops
