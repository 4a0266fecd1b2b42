// Call records, enumeration and tuning, and holding sub-ops.
#include <doctest/doctest.h>

#include "support/log_capture.hpp"
#include "support/host_runtime.hpp"
#include "support/test_ops.hpp"
#include "signature/signature_plan.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/op_class_builder.hpp"

using namespace tileops;
using namespace tileops::test;

TEST_CASE("last_call raises before any completed call, eval_roofline evaluates it") {
  ScaleTestFwdOp op;
  CHECK_THROWS_WITH_AS(op.eval_roofline(), doctest::Contains("no call has completed yet"), RuntimeError);
  op(Tensor::zeros({4, 8}, DType::float16));
  const Roofline r = op.eval_roofline();
  CHECK(r.flops == 32);
  CHECK(r.bytes == 2 * 32 * 2);  // x read once, y written once, 2 bytes each
}

TEST_CASE("request_tune tunes built kernels now and kernels built later right after building") {
  counters().reset();
  ScaleTestFwdOp op(1.0);
  op(ramp(2));
  CHECK(counters().tunes == 0);
  op.request_tune();
  CHECK(op.tune_requested());
  CHECK(counters().tunes == 1);
  op(ramp(2, DType::float16));  // a new entry: tuned as soon as it is built
  CHECK(counters().tunes == 2);
  for (Kernel* k : op.iter_kernels()) CHECK(k->tune_requested());
}

TEST_CASE("request_tune reaches held sub-ops, including ones held afterwards") {
  counters().reset();
  ChainTestFwdOp chain;
  chain.request_tune();
  CHECK(chain.first().tune_requested());
  CHECK(chain.second().tune_requested());
  chain(ramp(2));
  CHECK(counters().tunes == 2);  // one entry per sub-op, tuned when built
}

TEST_CASE("a target serving the op cannot be tuned: the op warns once") {
  Registrar reg("tune_test");
  reg.register_device_runtime(std::make_shared<HostRuntime>("tune_t", 1, false));
  reg.register_detector("tune_t", [](const Device& d) { return d.type().name() == "tune_t"; });
  reg.register_kernel_builder("ScaleTestFwdOp", "tune_t", [](auto, const ParamMap&) -> TargetKernel {
    return [](const CallArgs& args) -> OpOutputs { return {args.inputs[0].clone()}; };
  });
  LogCapture logs;
  ScaleTestFwdOp op;
  op(ramp(2).to(Device::parse("tune_t:0")));
  op.request_tune();
  op.request_tune();
  const std::string text = logs.text();
  const auto first = text.find("cannot be tuned");
  CHECK(first != std::string::npos);
  CHECK(text.find("cannot be tuned", first + 1) == std::string::npos);
}

TEST_CASE("kernel_config returns the first configured kernel's configuration") {
  ScaleTestFwdOp op(3.0);
  CHECK_FALSE(op.kernel_config().has_value());
  op(ramp(2));
  CHECK(op.kernel_config() == "reference scale=3.000000");
}

TEST_CASE("held_delegates lists sub-ops in stage order, iter_kernels includes theirs") {
  ChainTestFwdOp chain;
  const auto held = chain.held_delegates();
  REQUIRE(held.size() == 2);
  CHECK(held[0] == &chain.first());
  CHECK(held[1] == &chain.second());
  chain(ramp(2));
  CHECK(chain.iter_kernels().size() == 2);
}

TEST_CASE("delegate_for: built sub-ops inherit the target, injected ones keep theirs") {
  auto injected = std::make_shared<ScaleTestFwdOp>(2.0, std::string(BUILTIN));
  ChainTestFwdOp chain("some_target", injected);
  CHECK(&chain.first() == injected.get());
  CHECK(chain.first().target() == std::string(BUILTIN));
  CHECK(chain.second().target() == "some_target");
}

namespace {

struct HoldingProbe : ChainTestFwdOp {
  using ChainTestFwdOp::ChainTestFwdOp;
  ScaleTestFwdOp& hold(std::string_view stage, Identity id, std::shared_ptr<ScaleTestFwdOp> given = nullptr) {
    return delegate_for<ScaleTestFwdOp>(stage, std::move(id), std::move(given), 5.0);
  }
};

}  // namespace

TEST_CASE("delegate_for holds one instance per (stage, identity)") {
  HoldingProbe chain;
  ScaleTestFwdOp& a = chain.hold("first", Identity::of(std::int64_t{8}));
  ScaleTestFwdOp& b = chain.hold("first", Identity::of(std::int64_t{8}));
  ScaleTestFwdOp& c = chain.hold("first", Identity::of(std::int64_t{16}));
  CHECK(&a == &b);
  CHECK(&a != &c);
  CHECK(chain.held_delegates().size() == 4);
}

TEST_CASE("delegate_for rejects one instance under two keys, undeclared stages and wrong classes") {
  HoldingProbe chain;
  auto shared = std::make_shared<ScaleTestFwdOp>(1.0);
  chain.hold("first", Identity::of(std::int64_t{1}), shared);
  CHECK_THROWS_WITH_AS(chain.hold("second", Identity::of(std::int64_t{1}), shared),
                       doctest::Contains("is already held under stage 'first'"), ValueError);
  CHECK_THROWS_WITH_AS(chain.hold("third", Identity()), doctest::Contains("stage 'third' is not declared"), TypeError);
}

TEST_CASE("records: a record stays readable after its op, the op's class and the class's plan are released") {
  constexpr const char* kManifest = R"yaml(
ScaleTestFwdOp:
  family: testing
  status: implemented
  signature:
    forall: {S: Shape, T: "DType[float32 | float16 | bfloat16]"}
    params:
      scale: {type: float, default: 1.0}
    inputs:
      x: {dtype: T, shape: "[*S]"}
      bias: {dtype: T, shape: "[*S]", optional: true}
    outputs:
      y: {dtype: T, shape: "[*S]"}
  workloads:
  - {S: [4], dtype_cases: [{T: float32}], label: tiny}
  - {S: [4], some: [bias], dtype_cases: [{T: float32}], label: tiny-bias}
  roofline:
    flops: "prod(S)"
)yaml";
  SignatureCallPtr record;
  {
    const OpClass cls = OpClass::define("ScaleTestFwdOp")
                            .plan(SignaturePlan::from_yaml(kManifest, "ScaleTestFwdOp"))
                            .interface<ScaleInterface>("scale")
                            .kernel_type<ScaleReference>("scale_reference")
                            .build();
    ScaleTestFwdOp op(cls, 2.0, {});
    op(ramp(3));
    record = op.last_call();
  }
  CHECK(record->op == "ScaleTestFwdOp");
  REQUIRE(record->tensor("y") != nullptr);
  CHECK(record->tensor("y")->shape == Shape{3});
  CHECK(record->index("S") != nullptr);
}

TEST_CASE("records: the record names what served the call: kernel keys in-tree, the target's name, nothing for an empty write") {
  ScaleTestFwdOp op(2.0);
  op(ramp(3));
  CHECK(std::vector<std::string_view>(op.last_call()->kernels.begin(), op.last_call()->kernels.end()) ==
        std::vector<std::string_view>{"scale_reference"});
  op(Tensor::empty({0}, DType::float32));
  CHECK(op.last_call()->kernels.empty());  // an empty write runs no kernel

  ChainTestFwdOp chain;
  chain(ramp(2));
  CHECK(chain.last_call()->kernels.empty());  // the sub-ops did the work
  CHECK(chain.last_call()->stage_calls("first")[0]->kernels.front() == "scale_reference");
  CHECK(chain.last_call()->str().find("served by: scale_reference") != std::string::npos);

  Registrar reg("served_test");
  reg.register_device_runtime(std::make_shared<HostRuntime>("served_t", 1, false));
  reg.register_detector("served_t", [](const Device& d) { return d.type().name() == "served_t"; });
  reg.register_kernel_builder("ScaleTestFwdOp", "served_t", [](auto, const ParamMap&) -> TargetKernel {
    return [](const CallArgs& args) -> OpOutputs { return {args.inputs[0].clone()}; };
  });
  ScaleTestFwdOp served(1.0);
  served(ramp(2).to(Device::parse("served_t:0")));
  REQUIRE(served.last_call()->kernels.size() == 1);
  CHECK(served.last_call()->kernels[0] == "served_t");
}
