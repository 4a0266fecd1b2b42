#include "support/rule_ops.hpp"

#include <array>
#include <map>
#include <mutex>
#include "tileops/extend/op_class_builder.hpp"

namespace tileops::test {
namespace {

constexpr const char* kRuleManifest = R"yaml(
RuleChainFwdOp:
  family: testing
  status: implemented
  signature:
    forall: {S: Shape, T: "DType[float32 | float16 | bfloat16]"}
    inputs:
      x: {dtype: T, shape: "[*S]"}
    outputs:
      y: {dtype: T, shape: "[*S]"}
  composition:
    kind: composite
    stages:
    - {name: first, op: ScaleTestFwdOp}
    - {name: second, op: ScaleTestFwdOp}
  workloads:
  - {S: [4], dtype_cases: [{T: float32}], label: tiny}
  roofline:
    flops: "2 * prod(S)"

RuleMixedFwdOp:
  family: testing
  status: implemented
  signature:
    forall: {S: Shape, T: "DType[float32 | float16 | bfloat16]"}
    inputs:
      x: {dtype: T, shape: "[*S]"}
    outputs:
      y: {dtype: T, shape: "[*S]"}
  composition:
    kind: composite
    stages:
    - {name: first, op: ScaleTestFwdOp}
  workloads:
  - {S: [4], dtype_cases: [{T: float32}], label: tiny}
  roofline:
    flops: "2 * prod(S)"

RuleBackendOnlyFwdOp:
  family: testing
  status: implemented
  signature:
    forall: {S: Shape, T: "DType[float32 | float16 | bfloat16]"}
    inputs:
      x: {dtype: T, shape: "[*S]"}
    outputs:
      y: {dtype: T, shape: "[*S]"}
  workloads:
  - {S: [4], dtype_cases: [{T: float32}], label: tiny}
  roofline:
    flops: "prod(S)"
)yaml";

}  // namespace

std::shared_ptr<const SignaturePlan> rule_plan(const std::string& op) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const SignaturePlan>> plans;
  std::lock_guard lock(mutex);
  auto& plan = plans[op];
  if (!plan) plan = SignaturePlan::from_yaml(kRuleManifest, op, "rule_ops.cpp");
  return plan;
}

const OpClass& RuleChainFwdOp::op_class() {
  static const OpClass cls = OpClass::define("RuleChainFwdOp")
                                 .plan(rule_plan("RuleChainFwdOp"))
                                 .delegate("first", "ScaleTestFwdOp")
                                 .delegate("second", "ScaleTestFwdOp")
                                 .build();
  return cls;
}

RuleChainFwdOp::RuleChainFwdOp(Target target, bool hold_both, bool second_first) : Op(op_class(), {}, std::move(target)) {
  if (!hold_both) return;
  if (second_first) {
    second = &hold("second", Identity(), nullptr, 3.0);
    first = &hold("first", Identity(), nullptr, 2.0);
  } else {
    first = &hold("first", Identity(), nullptr, 2.0);
    second = &hold("second", Identity(), nullptr, 3.0);
  }
}

ScaleTestFwdOp& RuleChainFwdOp::hold(std::string_view stage, Identity identity, std::shared_ptr<ScaleTestFwdOp> given,
                                     double scale) {
  return delegate_for<ScaleTestFwdOp>(stage, std::move(identity), std::move(given), scale);
}

Tensor RuleChainFwdOp::operator()(const Tensor& x) {
  const std::array<Tensor, 1> inputs{x};
  return call(CallArgs(inputs)).front();
}

OpOutputs RuleChainFwdOp::forward(const CallArgs& args) {
  ++forward_runs;
  if (body) return {body(*this, args.inputs[0])};
  return {(*second)((*first)(args.inputs[0]))};
}

const OpClass& RuleMixedFwdOp::op_class() {
  static const OpClass cls = OpClass::define("RuleMixedFwdOp")
                                 .plan(rule_plan("RuleMixedFwdOp"))
                                 .delegate("first", "ScaleTestFwdOp")
                                 .interface<ScaleInterface>("scale")
                                 .kernel_type<ScaleReference>("scale_reference")
                                 .build();
  return cls;
}

RuleMixedFwdOp::RuleMixedFwdOp(Target target) : Op(op_class(), {}, std::move(target)) {
  first_ = &delegate_for<ScaleTestFwdOp>("first", Identity(), nullptr, 2.0);
}

Tensor RuleMixedFwdOp::operator()(const Tensor& x) {
  const std::array<Tensor, 1> inputs{x};
  return call(CallArgs(inputs)).front();
}

OpOutputs RuleMixedFwdOp::forward(const CallArgs& args) {
  ++forward_runs;
  const Tensor h = (*first_)(args.inputs[0]);
  ScaleCall call;
  call.device = h.device();
  call.n = h.numel();
  call.dtype = h.dtype();
  call.scale = 5.0;
  return {kernel_for<ScaleInterface>("scale", call).forward(h, Tensor())};
}

const OpClass& RuleBackendOnlyFwdOp::op_class() {
  static const OpClass cls = OpClass::define("RuleBackendOnlyFwdOp").plan(rule_plan("RuleBackendOnlyFwdOp")).build();
  return cls;
}

RuleBackendOnlyFwdOp::RuleBackendOnlyFwdOp(Target target) : Op(op_class(), {}, std::move(target)) {}

Tensor RuleBackendOnlyFwdOp::operator()(const Tensor& x) {
  const std::array<Tensor, 1> inputs{x};
  return call(CallArgs(inputs)).front();
}

OpOutputs RuleBackendOnlyFwdOp::forward(const CallArgs& args) {
  ++forward_runs;
  return {args.inputs[0].clone()};
}

}  // namespace tileops::test
