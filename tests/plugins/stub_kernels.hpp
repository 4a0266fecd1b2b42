// Kernel types of the boundary corpus for in-tree interfaces. The host refuses most of them when
// their plugin loads; those it keeps never compute anything meaningful (their forward hands the
// input back), so only tests that expect them to be refused or to tie use them.
#pragma once

#include <stdexcept>

#include "tileops/extend/kernel.hpp"
#include "tileops/extend/ops/elementwise.hpp"
#include "tileops/extend/ops/norm.hpp"
#include "tileops/extend/ops/softmax.hpp"

namespace tileops::test_plugins {

// A specific cpu RMSNorm with no precedence: it ties with the cpu plugin's cpu_rms_norm.
class StubRMSNorm : public ops::RMSNormFwdOp::RmsNorm::Impl<> {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  using Impl::Impl;
  Tensor forward(const Tensor& x, const Tensor&) override { return x; }
};

// A second general RMSNorm (the in-tree reference is the first).
class GeneralRMSNorm final : public StubRMSNorm {
 public:
  static constexpr bool general = true;
  using StubRMSNorm::StubRMSNorm;
};

// Preferred over a key that nobody registered.
class PrefersMissingRMSNorm final : public StubRMSNorm {
 public:
  static constexpr KeyList preferred_over{"cpu_rms_norm_v2"};
  using StubRMSNorm::StubRMSNorm;
};

// A softmax kernel, registered for an op that has no softmax interface.
class StubSoftmax final : public ops::SoftmaxFwdOp::Softmax::Impl<> {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  using Impl::Impl;
  Tensor forward(const Tensor& x) override { return x; }
};

// A training-mode batch norm preferred over the inference interface's reference.
class PrefersOtherInterfaceBatchNorm final : public ops::BatchNormFwdOp::BatchNormFwdTrain::Impl<> {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr KeyList preferred_over{"batch_norm_infer_reference"};
  using Impl::Impl;
  Result forward(const Tensor& x, const Tensor&, const Tensor&, const Tensor&, const Tensor&) override {
    return {x, {}, {}};
  }
};

// A relu that wins over the cpu plugin's and throws a std::invalid_argument on every call.
class ThrowingRelu final : public ops::ReluFwdOp::Relu::Impl<> {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr KeyList preferred_over{"cpu_relu"};
  using Impl::Impl;
  void forward(const Tensor&, const Tensor&) override {
    throw std::invalid_argument("throwing_relu does not compute anything");
  }
};

}  // namespace tileops::test_plugins
