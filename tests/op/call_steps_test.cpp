// The call entry (Op::call, run_call, boundary operators) and the seven steps of a call.
#include <doctest/doctest.h>

#include "support/test_ops.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/graph.hpp"

using namespace tileops;
using namespace tileops::test;

TEST_CASE("call entry 1: op(...) of an op with boundary operators runs the body through run_call") {
  ScaleTestFwdOp op(2.0);
  const Tensor y = op(ramp(3));
  CHECK(y.to_doubles() == std::vector<double>{2, 4, 6});
  CHECK(op.forward_runs == 1);
  CHECK(op.last_call()->tensor("y")->shape == Shape{3});
}

TEST_CASE("call entry 2: a composite without boundary operators binds its arguments and runs run_call") {
  ChainTestFwdOp chain;
  const Tensor y = chain(ramp(2));
  CHECK(y.to_doubles() == std::vector<double>{6, 12});
  CHECK(chain.forward_runs == 1);
  CHECK(chain.last_call()->op == "ChainTestFwdOp");
}

TEST_CASE("call entry 3: an eager call on meta tensors runs the fake: check, record, outputs by the signature") {
  counters().reset();
  ScaleTestFwdOp op(2.0);
  const Tensor x = Tensor::empty({5, 7}, DType::bfloat16, Device::meta());
  const Tensor y = op(x);
  CHECK(y.device().is_meta());
  CHECK(y.shape() == Shape{5, 7});
  CHECK(y.dtype() == DType::bfloat16);
  CHECK(op.forward_runs == 0);
  CHECK(counters().builds == 0);
  CHECK_FALSE(op.serving_target().has_value());
  CHECK(op.last_call()->device == Device::meta());
  CHECK_THROWS_AS(op(Tensor::empty({5, 7}, DType::int32, Device::meta())), TypeError);
}

TEST_CASE("call entry 4: a captured composite is not entered, its sub-ops' calls become graph nodes") {
  auto chain = std::make_unique<ChainTestFwdOp>();
  const TensorSpec spec{Device::cpu(), DType::float32, Shape{3}};
  const Graph graph = Graph::capture(std::span(&spec, 1), [&](std::span<const Tensor> in) {
    return std::vector<Tensor>{(*chain)(in[0])};
  });
  CHECK(chain->forward_runs == 1);  // forward ran on meta tensors, during capture only
  CHECK_THROWS_AS(chain->last_call(), RuntimeError);  // run_call was not entered
  REQUIRE(graph.nodes().size() == 2);
  CHECK(graph.nodes()[0].instance_key == chain->first().instance_key());
  CHECK(graph.nodes()[0].operator_name.rfind("tileops::testing_scale_test_fwd", 0) == 0);
  CHECK(graph.nodes()[1].instance_key == chain->second().instance_key());

  const Tensor x = ramp(3);
  CHECK(graph.run(std::span(&x, 1))[0].to_doubles() == (*chain)(x).to_doubles());

  chain.reset();
  CHECK_THROWS_WITH_AS(graph.run(std::span(&x, 1)), doctest::Contains("which no longer exists"), RuntimeError);
}

TEST_CASE("a graph keeps real tensors passed during capture as constants") {
  ScaleTestFwdOp op(1.0);
  const Tensor bias = ramp(3);
  const TensorSpec spec{Device::cpu(), DType::float32, Shape{3}};
  const Graph graph = Graph::capture(std::span(&spec, 1), [&](std::span<const Tensor> in) {
    return std::vector<Tensor>{op(in[0], bias)};
  });
  const Tensor x = ramp(3);
  CHECK(graph.run(std::span(&x, 1))[0].to_doubles() == std::vector<double>{2, 4, 6});
  const Tensor wrong = ramp(4);
  CHECK_THROWS_WITH_AS(graph.run(std::span(&wrong, 1)), doctest::Contains("captured for float32[3]"), ValueError);
}

TEST_CASE("call step 2: a call that fails its signature check runs nothing") {
  ScaleTestFwdOp op;
  CHECK_THROWS_AS(op(ramp(3), ramp(4)), ValueError);  // bias [4] against x [3]
  CHECK_THROWS_AS(op(ramp(3, DType::int32)), TypeError);
  CHECK(op.forward_runs == 0);
  CHECK_FALSE(op.serving_target().has_value());
  CHECK_THROWS_AS(op.last_call(), RuntimeError);
}

TEST_CASE("call step 3: when every written tensor is empty no implementation runs and no target is selected") {
  counters().reset();
  ScaleTestFwdOp op;
  const Tensor y = op(Tensor::empty({0, 4}, DType::float16));
  CHECK(y.shape() == Shape{0, 4});
  CHECK(y.dtype() == DType::float16);
  CHECK(op.forward_runs == 0);
  CHECK(counters().builds == 0);
  CHECK_FALSE(op.serving_target().has_value());
  CHECK(op.last_call()->tensor("y")->shape == Shape{0, 4});
}

TEST_CASE("call steps 4 and 5: the first call that runs an implementation selects the target") {
  ScaleTestFwdOp op;
  CHECK_FALSE(op.serving_target().has_value());
  op(ramp(2));
  CHECK(op.serving_target() == std::string(BUILTIN));
  CHECK(op.forward_runs == 1);
}

namespace {

class WrongShape final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  explicit WrongShape(const ScaleCall&) {}
  Tensor forward(const Tensor& x, const Tensor&) override { return Tensor::zeros({x.numel() + 1}, x.dtype()); }
};

}  // namespace

TEST_CASE("call step 6: an implementation that breaks the signature fails the call") {
  Registrar reg("test");
  reg.register_kernel_type<WrongShape>("ScaleTestFwdOp", "wrong_shape");
  ScaleTestFwdOp op;
  op(Tensor::empty({0}, DType::float32));  // an empty write succeeds without the kernel
  const auto before = op.last_call();
  CHECK_THROWS_WITH_AS(op(ramp(2)), doctest::Contains("'y'"), RuntimeError);
  CHECK(op.last_call() == before);
}

TEST_CASE("call step 7: the record keeps shapes, dtypes, indices and becomes last_call") {
  ScaleTestFwdOp op(2.0);
  op(ramp(3), ramp(3));
  const SignatureCallPtr rec = op.last_call();
  CHECK(rec->op == "ScaleTestFwdOp");
  CHECK(rec->device == Device::cpu());
  REQUIRE(rec->tensor("bias") != nullptr);
  CHECK(rec->tensor("x")->dtype == DType::float32);
  REQUIRE(rec->index("S") != nullptr);
  CHECK(*rec->index("S") == IndexValue(Shape{3}));
  CHECK(op.eval_roofline().flops == 3);
  op(ramp(5));
  CHECK(op.last_call() != rec);
  CHECK(op.last_call()->tensor("bias") == nullptr);
}

TEST_CASE("call steps 1 and 7: sub-op calls are filed under their stages in the parent's record") {
  ChainTestFwdOp chain;
  chain(ramp(4));
  const SignatureCallPtr rec = chain.last_call();
  REQUIRE(rec->stages.size() == 2);
  CHECK(rec->stages[0].stage == "first");
  CHECK(rec->stage_calls("first").size() == 1);
  CHECK(rec->stage_calls("second").size() == 1);
  CHECK(rec->stage_calls("first")[0] == chain.first().last_call());
  CHECK(chain.eval_roofline().flops == 8);
}

TEST_CASE("a sub-op not held through delegate_for fails the parent call") {
  ChainTestFwdOp chain;
  ScaleTestFwdOp stray;
  chain.stray = &stray;
  CHECK_THROWS_WITH_AS(chain(ramp(2)), doctest::Contains("is not held through delegate_for"), RuntimeError);
  CHECK_THROWS_AS(chain.last_call(), RuntimeError);
  CHECK(stray.last_call() != nullptr);  // the stray's own call completed
}

TEST_CASE("composite: a stray sub-op that is a local of forward is named by the failure after it is gone") {
  ChainTestFwdOp chain;
  chain.local_stray = true;
  const std::string probe = ScaleTestFwdOp().instance_key();  // "ScaleTestFwdOp#<n>"; keys count up
  const std::string local = "ScaleTestFwdOp#" + std::to_string(std::stoll(probe.substr(probe.find('#') + 1)) + 1);
  const std::string expected = "sub-op " + local + " completed a call during this call but is not held";
  CHECK_THROWS_WITH_AS(chain(ramp(2)), doctest::Contains(expected.c_str()), RuntimeError);
}
