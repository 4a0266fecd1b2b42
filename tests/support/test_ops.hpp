// Test ops for the Op base suites: a tiny manifest compiled from YAML, a kernel interface,
// implementations that count what dispatch does with them, and ops built on them.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <string>

#include "signature/signature_plan.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/op.hpp"

namespace tileops::test {

// The plan of `op` from the test manifest (tests/support/test_ops.cpp).
std::shared_ptr<const SignaturePlan> test_plan(const std::string& op);

struct ScaleCall final : CallSpec {
  std::int64_t n = 0;
  DType dtype = DType::float32;
  double scale = 1.0;
  auto fields() const { return std::tie(n, dtype, scale); }
};

class ScaleInterface : public KernelInterface {
 public:
  using Interface = ScaleInterface;
  using Request = ScaleCall;
  static constexpr std::string_view kName = "ScaleInterface";
  // x: contiguous, call.dtype; bias: like x or undefined. Returns new y = x * scale + bias.
  virtual Tensor forward(const Tensor& x, const Tensor& bias) = 0;
};

// Another interface, for contract tests.
class OtherInterface : public KernelInterface {
 public:
  using Interface = OtherInterface;
  using Request = ScaleCall;
  static constexpr std::string_view kName = "OtherInterface";
  virtual Tensor forward(const Tensor& x) = 0;
};

// Counters of what dispatch and the base did with the test kernels.
struct Counters {
  std::atomic<int> builds{0};     // entry factories run
  std::atomic<int> refusals{0};   // refusal() consulted
  std::atomic<int> runs{0};       // forward() run
  std::atomic<int> tunes{0};      // request_tune() reached a kernel
  void reset() {
    builds = 0;
    refusals = 0;
    runs = 0;
    tunes = 0;
  }
};
Counters& counters();

Tensor scale_tensor(const Tensor& x, const Tensor& bias, double scale);

// The general reference: cpu, every call; identity (dtype, scale) so that calls differing
// only in n share one entry.
class ScaleReference final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr bool general = true;
  explicit ScaleReference(double scale) : scale_(scale) {}
  static Entry entry_for(const ScaleCall& call);
  static std::optional<std::string> refusal(const ScaleCall&) {
    ++counters().refusals;
    return std::nullopt;
  }
  Tensor forward(const Tensor& x, const Tensor& bias) override;
  void request_tune() override {
    Kernel::request_tune();
    ++counters().tunes;
  }
  std::optional<std::string> config() const override { return "reference scale=" + std::to_string(scale_); }

 private:
  double scale_;
};

// A faster kernel for short rows (n <= 16); non-general.
class ScaleShort final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  explicit ScaleShort(const ScaleCall& call) : scale_(call.scale) { ++counters().builds; }
  static std::optional<std::string> refusal(const ScaleCall& call) {
    return call.n <= 16 ? std::nullopt : std::optional<std::string>("serves rows of at most 16 elements");
  }
  Tensor forward(const Tensor& x, const Tensor& bias) override;

 private:
  double scale_;
};

// ScaleTestFwdOp: y = x * scale (+ bias). Interface "scale", in-tree kernel "scale_reference".
class ScaleTestFwdOp : public Op {
 public:
  static const OpClass& op_class();
  explicit ScaleTestFwdOp(double scale = 1.0, Target target = {}) : ScaleTestFwdOp(op_class(), scale, std::move(target)) {}
  ScaleTestFwdOp(const OpClass& cls, double scale, Target target);
  Tensor operator()(const Tensor& x, const Tensor& bias = {});
  std::atomic<int> forward_runs{0};

 protected:
  OpOutputs forward(const CallArgs& args) override;
  double scale_;
};

// ChainTestFwdOp: composite, stages first and second, each a ScaleTestFwdOp.
class ChainTestFwdOp : public Op {
 public:
  static const OpClass& op_class();
  explicit ChainTestFwdOp(Target target = {}, std::shared_ptr<ScaleTestFwdOp> first = nullptr);
  Tensor operator()(const Tensor& x);
  ScaleTestFwdOp& first() { return *first_; }
  ScaleTestFwdOp& second() { return *second_; }
  // When set, forward also calls this op, which the chain does not hold.
  ScaleTestFwdOp* stray = nullptr;
  // When set, forward also makes a ScaleTestFwdOp of its own, calls it and destroys it.
  bool local_stray = false;
  std::atomic<int> forward_runs{0};

 protected:
  OpOutputs forward(const CallArgs& args) override;

 private:
  ScaleTestFwdOp* first_;
  ScaleTestFwdOp* second_;
};

// FillTestFwdOp: no tensor input; y = [n] filled with 1 on the `device` parameter's device.
class FillTestFwdOp : public Op {
 public:
  static const OpClass& op_class();
  explicit FillTestFwdOp(std::int64_t n, std::optional<Device> device = std::nullopt, Target target = {});
  Tensor operator()();
  std::atomic<int> forward_runs{0};

 protected:
  OpOutputs forward(const CallArgs& args) override;

 private:
  std::int64_t n_;
  std::optional<Device> device_;
};

// OffsetTestFwdOp: y = x + offset, with `offset` a construction-time tensor (not declared
// `device: cpu`). Interface "offset", in-tree kernel "offset_reference" on cpu and plain_t.
// forward keeps the offset it computed with in `seen_offset`.
class OffsetTestFwdOp : public Op {
 public:
  static const OpClass& op_class();
  explicit OffsetTestFwdOp(Tensor offset, Target target = {});
  Tensor operator()(const Tensor& x);
  Tensor seen_offset;

 protected:
  OpOutputs forward(const CallArgs& args) override;
};

// A cpu tensor of `n` float32 values 1, 2, ..., n.
Tensor ramp(std::int64_t n, DType dtype = DType::float32);

}  // namespace tileops::test
