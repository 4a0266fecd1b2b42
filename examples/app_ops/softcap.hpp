// The application's SoftcapFwdOp: the class generated from manifests/softcap.yaml (by
// tileops_add_ops), its call spec and kernel interface, and the reference kernel.
#pragma once

#include <string_view>
#include <tuple>

#include "app/ops/softcap.hpp"
#include "tileops/extend/kernel.hpp"

namespace app {

struct SoftcapCall final : tileops::CallSpec {
  double cap = 30.0;
  tileops::DType dtype = tileops::DType::float32;
  auto fields() const { return std::tie(cap, dtype); }
};

class SoftcapFwdInterface : public tileops::KernelInterface {
 public:
  using Interface = SoftcapFwdInterface;
  using Request = SoftcapCall;
  static constexpr std::string_view kName = "SoftcapFwdInterface";

  // x: contiguous, call.dtype, on call.device. Returns a new contiguous tensor like x holding
  // call.cap * tanh(x / call.cap), computed in double.
  virtual tileops::Tensor forward(const tileops::Tensor& x) = 0;
};

// The general cpu kernel: every call no faster kernel serves, and the tests' oracle.
class SoftcapReference final : public tileops::Kernel, public SoftcapFwdInterface {
 public:
  static constexpr tileops::DeviceTypes devices{"cpu"};
  static constexpr bool general = true;
  explicit SoftcapReference(const SoftcapCall& call) : call_(call) {}
  tileops::Tensor forward(const tileops::Tensor& x) override;

 private:
  SoftcapCall call_;
};

}  // namespace app
