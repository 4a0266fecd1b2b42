// Ops for the suites that check the rules of the documentation's sibling pages
// (tests/op/*_rules_test.cpp): composites whose holding and body a test decides, a composite
// that also runs a kernel of its own, and an op written only for external backends.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "support/log_capture.hpp"
#include "support/host_runtime.hpp"
#include "support/test_ops.hpp"
#include "tileops/extend/backend.hpp"

namespace tileops::test {

// The plan of `op` from the rule ops' manifest (tests/support/rule_ops.cpp).
std::shared_ptr<const SignaturePlan> rule_plan(const std::string& op);

// RuleChainFwdOp: composite, stages first and second, each a ScaleTestFwdOp; no kernels.
// Construction holds nothing unless asked; the test holds sub-ops through hold() (which is
// delegate_for) and decides what forward does through `body` (default: second(first(x))).
class RuleChainFwdOp : public Op {
 public:
  static const OpClass& op_class();
  // With hold_both, holds first (scale 2) and second (scale 3) at construction, in the order
  // `second_first` says.
  explicit RuleChainFwdOp(Target target = {}, bool hold_both = true, bool second_first = false);
  Tensor operator()(const Tensor& x);
  // delegate_for on this op: the sub-op of `stage` for `identity`, built with `scale` or `given`.
  ScaleTestFwdOp& hold(std::string_view stage, Identity identity, std::shared_ptr<ScaleTestFwdOp> given = nullptr,
                       double scale = 1.0);
  ScaleTestFwdOp* first = nullptr;
  ScaleTestFwdOp* second = nullptr;
  std::function<Tensor(RuleChainFwdOp&, const Tensor&)> body;
  std::atomic<int> forward_runs{0};

 protected:
  OpOutputs forward(const CallArgs& args) override;
};

// RuleMixedFwdOp: composite with one stage, first (a ScaleTestFwdOp of scale 2), that also
// runs a kernel of its own: y = scale_reference(first(x)) with scale 5.
class RuleMixedFwdOp : public Op {
 public:
  static const OpClass& op_class();
  explicit RuleMixedFwdOp(Target target = {});
  Tensor operator()(const Tensor& x);
  ScaleTestFwdOp& first() { return *first_; }
  std::atomic<int> forward_runs{0};

 protected:
  OpOutputs forward(const CallArgs& args) override;

 private:
  ScaleTestFwdOp* first_;
};

// RuleBackendOnlyFwdOp: y = x, written only for external backends: no kernel types, no
// interfaces, no composition. Its forward copies x and counts, so a test sees if it ran.
class RuleBackendOnlyFwdOp : public Op {
 public:
  static const OpClass& op_class();
  explicit RuleBackendOnlyFwdOp(Target target = {});
  Tensor operator()(const Tensor& x);
  std::atomic<int> forward_runs{0};

 protected:
  OpOutputs forward(const CallArgs& args) override;
};

// A target "rule_t" claiming the devices of a host-memory device type "rule_t" (two devices),
// with a builder for ScaleTestFwdOp whose kernel computes x * scale * 10 (so a test can tell
// it ran). Counts the detector's answers, the builds and the kernel runs. Everything is
// registered under plugin "rule_target" and rolled back when the object dies.
struct RuleTarget {
  std::atomic<int> detects{0};
  std::atomic<int> builds{0};
  std::atomic<int> runs{0};
  ParamMap last_params;
  Registrar reg{"rule_target"};

  explicit RuleTarget(bool scale_builder = true) {
    reg.register_device_runtime(std::make_shared<HostRuntime>("rule_t", 2, false));
    reg.register_detector("rule_t", [this](const Device& d) {
      ++detects;
      return d.type().name() == "rule_t";
    });
    if (scale_builder) {
      reg.register_kernel_builder("ScaleTestFwdOp", "rule_t",
                                  [this](std::span<const std::optional<TensorSpec>>, const ParamMap& params) -> TargetKernel {
                                    ++builds;
                                    last_params = params;
                                    const double scale = std::get<double>(params.at("scale"));
                                    return [this, scale](const CallArgs& args) -> OpOutputs {
                                      ++runs;
                                      return {scale_tensor(args.inputs[0], args.inputs[1], scale * 10)};
                                    };
                                  });
    }
  }
};

// `t` copied to device `device` ("rule_t:0").
inline Tensor to_device(const Tensor& t, const char* device) { return t.to(Device::parse(device)); }

}  // namespace tileops::test
