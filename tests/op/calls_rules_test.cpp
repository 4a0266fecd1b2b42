// The rules of calls and their validation against the manifest (empty writes, composition,
// shape_rules) that the suites elsewhere do not already check; see tests/signature/*.cpp and
// tests/op/call_steps_test.cpp for the others.
#include <doctest/doctest.h>

#include "tileops/errors.hpp"
#include "support/rule_ops.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/op_class_builder.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/reduction.hpp"

using namespace tileops;
using namespace tileops::test;

TEST_CASE("calls: an empty write creates its new outputs on the call device, with the checked shape and dtype") {
  Registrar reg("rules");
  reg.register_device_runtime(std::make_shared<HostRuntime>("empty_t", 2, false));
  ScaleTestFwdOp op(2.0);
  const Tensor y = op(Tensor::empty({0, 3}, DType::bfloat16, Device::parse("empty_t:1")));
  CHECK(y.device() == Device::parse("empty_t:1"));
  CHECK(y.shape() == Shape{0, 3});
  CHECK(y.dtype() == DType::bfloat16);
  CHECK(op.forward_runs == 0);  // no in-tree kernel runs on empty_t, and none was needed
  CHECK(op.last_call()->device == Device::parse("empty_t:1"));
}

TEST_CASE("calls: an empty write returns the out buffer and the written inputs unchanged") {
  const Tensor base = Tensor::zeros({4}, DType::float32);
  const Tensor empty = base.slice(0, 2, 2);  // no elements, on real storage
  REQUIRE(empty.numel() == 0);
  REQUIRE(empty.storage() != nullptr);

  AddFwdOp add;
  const Tensor out = Tensor::zeros({4}, DType::float32).slice(0, 1, 1);
  const Tensor sum = add(empty, empty, out);
  CHECK(sum.storage() == out.storage());
  CHECK(sum.offset() == out.offset());
  CHECK_FALSE(add.serving_target().has_value());

  ReluFwdOp relu(/*inplace=*/true);
  const Tensor r = relu(empty);
  CHECK(r.storage() == base.storage());
  CHECK(r.offset() == empty.offset());
  CHECK(relu.last_call()->written.size() == 1);
}

TEST_CASE("calls: when the inputs are empty but the outputs are not, the implementation runs as usual") {
  SumFwdOp sum(std::int64_t{0});
  const Tensor y = sum(Tensor::zeros({0, 3}, DType::float32));
  CHECK(y.shape() == Shape{3});
  CHECK(y.to_doubles() == std::vector<double>{0, 0, 0});
  CHECK(sum.serving_target() == std::string(BUILTIN));  // an implementation ran and selected the target
  CHECK_FALSE(sum.built_entries("sum").empty());
}

TEST_CASE("calls: the class's sub-op stages are checked against the manifest composition, stage names and classes") {
  CHECK_THROWS_WITH_AS(OpClass::define("RuleChainFwdOp")
                           .plan(rule_plan("RuleChainFwdOp"))
                           .delegate("second", "ScaleTestFwdOp")
                           .delegate("first", "ScaleTestFwdOp")
                           .build(),
                       doctest::Contains("delegate stages [second, first] do not match the manifest composition [first, second]"),
                       TypeError);
  CHECK_THROWS_WITH_AS(OpClass::define("RuleChainFwdOp")
                           .plan(rule_plan("RuleChainFwdOp"))
                           .delegate("first", "FillTestFwdOp")
                           .delegate("second", "ScaleTestFwdOp")
                           .build(),
                       doctest::Contains("stage 'first' holds a FillTestFwdOp, but the manifest composition says ScaleTestFwdOp"),
                       TypeError);
  CHECK_NOTHROW(OpClass::define("RuleChainFwdOp")
                    .plan(rule_plan("RuleChainFwdOp"))
                    .delegate("first", "ScaleTestFwdOp")
                    .delegate("second", "ScaleTestFwdOp")
                    .build());
}

namespace {

const std::string kRulesBase = R"yaml(
RejectFwdOp:
  family: test
  status: spec-only
  signature:
    forall: {M: Dim, N: Dim, T: "DType[float16 | float32]"}
    params:
      scale: {type: float, default: 1.0}
      limit: {type: "int | None", default: null}
    inputs:
      x: {dtype: T, shape: "[M, N]"}
      bias: {dtype: T, shape: "[N]", optional: true}
    outputs:
      y: {dtype: T, shape: "[M, N]"}
    shape_rules:
    - "scale > 0"
    - RULE
  workloads:
  - {M: 4, N: 8, dtype_cases: [{T: float16}], label: unit}
  roofline:
    flops: "M * N"
)yaml";

std::string with_rule(const std::string& rule) {
  std::string yaml = kRulesBase;
  yaml.replace(yaml.find("RULE"), 4, "\"" + rule + "\"");
  return yaml;
}

}  // namespace

TEST_CASE("calls: shape_rules hold refinements only, a form that reads a shape, tests None or defines a name is rejected") {
  CHECK_NOTHROW(SignaturePlan::from_yaml(with_rule("not present(bias) or N > 0"), "RejectFwdOp"));
  CHECK_NOTHROW(SignaturePlan::from_yaml(with_rule("not present(limit) or limit.value > 0"), "RejectFwdOp"));
  const std::vector<std::string> rejected{
      "x.shape == y.shape",        // reading a tensor's shape
      "bias is None or N > 0",     // `is None` on a tensor
      "limit is None",             // `is None` on a value
      "K == N // 2",               // an equality defining a new name
      "isinstance(limit, int)",    // isinstance
  };
  for (const std::string& rule : rejected) {
    CAPTURE(rule);
    CHECK_THROWS_WITH_AS(SignaturePlan::from_yaml(with_rule(rule), "RejectFwdOp"), doctest::Contains("signature.shape_rules[1]"),
                         ManifestError);
  }
}
