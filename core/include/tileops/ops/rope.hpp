// RopeFwdOp: rotary position embedding in the rotate-half form. For position p (positions[s],
// else s) and i < D/2, with angle = p * theta^(-2i/D):
//   y[i] = x[i] cos(angle) - x[i + D/2] sin(angle),  y[i + D/2] = x[i + D/2] cos(angle) + x[i] sin(angle).
// The class is generated from manifests/rope.yaml; core/ops/rope holds its forward. Its call
// spec and kernel interface:
#pragma once

#include <cstdint>
#include <string_view>
#include <tuple>

#include "tileops/extend/kernel.hpp"
#include "tileops/ops/gen/rope.hpp"
#include "tileops/tensor.hpp"

namespace tileops {

struct RopeCall final : CallSpec {
  std::int64_t head_dim = 0;  // D
  double theta = 10000.0;
  DType dtype = DType::float32;
  auto fields() const { return std::tie(head_dim, theta, dtype); }
};

class RopeFwdInterface : public KernelInterface {
 public:
  using Interface = RopeFwdInterface;
  using Request = RopeCall;
  static constexpr std::string_view kName = "RopeFwdInterface";

  // x: contiguous [B, S, H, call.head_dim] in call.dtype on call.device; positions: contiguous
  // int64 [S], or undefined for positions 0..S-1. Returns a new contiguous tensor like x holding
  // the rotated values (angles computed in double); writes nothing in place.
  virtual Tensor forward(const Tensor& x, const Tensor& positions) = 0;
};

}  // namespace tileops
