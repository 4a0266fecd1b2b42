// SoftmaxFwdOp: softmax along one axis. The class is generated from manifests/softmax.yaml;
// core/ops/softmax/softmax.cpp holds its forward. Its call spec and kernel interface:
#pragma once

#include <cstdint>
#include <string_view>
#include <tuple>

#include "tileops/extend/kernel.hpp"
#include "tileops/op.hpp"
#include "tileops/ops/gen/softmax.hpp"

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

}  // namespace tileops
