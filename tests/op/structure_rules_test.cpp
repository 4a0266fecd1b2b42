// The rules of an op's class structure and instance state (the binding and the running
// state) that the suites elsewhere do not already check; see
// tests/op/construction_test.cpp, failure_test.cpp and records_test.cpp for the others.
#include <doctest/doctest.h>

#include "support/rule_ops.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"

using namespace tileops;
using namespace tileops::test;

namespace {

// A target "shape_t" on host-memory devices of that type whose kernel, for ScaleTestFwdOp,
// fails on a negative first element and returns one element too many when `wrong_shape`.
struct FlakyTarget {
  std::atomic<int> builds{0};
  std::atomic<bool> wrong_shape{false};
  Registrar reg{"flaky_target"};
  FlakyTarget() {
    reg.register_device_runtime(std::make_shared<HostRuntime>("shape_t", 1, false));
    reg.register_detector("shape_t", [](const Device& d) { return d.type().name() == "shape_t"; });
    reg.register_kernel_builder("ScaleTestFwdOp", "shape_t", [this](auto, const ParamMap&) -> TargetKernel {
      ++builds;
      return [this](const CallArgs& args) -> OpOutputs {
        const Tensor& x = args.inputs[0];
        if (x.numel() > 0 && x.get(0) < 0) throw RuntimeError("flaky target: negative input");
        if (wrong_shape) return {Tensor::zeros({x.numel() + 1}, x.dtype(), x.device())};
        return {x.clone()};
      };
    });
  }
};

Tensor negative_on(const char* device) {
  return Tensor::from_doubles(std::vector<double>{-1, 2}, std::vector<std::int64_t>{2}, DType::float32).to(Device::parse(device));
}

}  // namespace

TEST_CASE("instance state: undoing a target selection keeps the running group: tuned mode and the tuning warning, given once") {
  FlakyTarget target;
  LogCapture logs;
  ScaleTestFwdOp op(1.0);
  op.request_tune();
  CHECK_THROWS_WITH_AS(op(negative_on("shape_t:0")), doctest::Contains("negative input"), RuntimeError);
  CHECK_FALSE(op.serving_target().has_value());  // the binding group was reset
  CHECK(target.builds == 1);
  CHECK(op.tune_requested());  // the running group was kept
  CHECK(logs.count("cannot be tuned") == 1);  // warned when the target's kernel was built
  op(to_device(ramp(2), "shape_t:0"));
  CHECK(op.serving_target() == "shape_t");
  CHECK(target.builds == 2);  // selected and built again
  CHECK(logs.count("cannot be tuned") == 1);  // the flag survived the undo: still once per instance
}

TEST_CASE("instance state: a target's kernel gets the result check the in-tree kernels get, and its failure undoes the selection") {
  FlakyTarget target;
  ScaleTestFwdOp op(1.0);
  target.wrong_shape = true;
  CHECK_THROWS_WITH_AS(op(to_device(ramp(2), "shape_t:0")), doctest::Contains("'y'"), RuntimeError);
  CHECK_FALSE(op.serving_target().has_value());
  CHECK(op.built_entries("scale").empty());
  CHECK_THROWS_AS(op.last_call(), RuntimeError);
  target.wrong_shape = false;
  op(to_device(ramp(2), "shape_t:0"));
  CHECK(target.builds == 2);
  CHECK(op.serving_target() == "shape_t");
}

TEST_CASE("instance state: a call a target serves is recorded like an in-tree call: device, tensors, indices and roofline") {
  FlakyTarget target;
  ScaleTestFwdOp op(1.0);
  op(to_device(ramp(3), "shape_t:0"), to_device(ramp(3), "shape_t:0"));
  const SignatureCallPtr rec = op.last_call();
  CHECK(rec->device == Device::parse("shape_t:0"));
  REQUIRE(rec->tensor("y") != nullptr);
  CHECK(rec->tensor("y")->shape == Shape{3});
  CHECK(rec->tensor("bias") != nullptr);
  REQUIRE(rec->index("S") != nullptr);
  CHECK(*rec->index("S") == IndexValue(Shape{3}));
  CHECK(op.eval_roofline().flops == 3);
  // A failing call after the selection leaves that record in place.
  CHECK_THROWS_AS(op(negative_on("shape_t:0")), RuntimeError);
  CHECK(op.last_call() == rec);
  CHECK(op.serving_target() == "shape_t");
}
