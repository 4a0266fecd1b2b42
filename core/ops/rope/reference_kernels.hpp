// The portable reference kernel of RopeFwdOp: the general cpu implementation, plain loops in
// double; the numerical oracle of the tests.
#pragma once

#include "tileops/ops/rope.hpp"

namespace tileops::ref {

class RopeKernel final : public Kernel, public RopeFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr bool general = true;
  explicit RopeKernel(const RopeCall& call) : call_(call) {}
  Tensor forward(const Tensor& x, const Tensor& positions) override;

 private:
  RopeCall call_;
};

}  // namespace tileops::ref
