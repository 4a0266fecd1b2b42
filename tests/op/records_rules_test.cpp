// The rules of call records and tuning that the suites elsewhere do not already check; see tests/op/records_test.cpp and
// tests/signature/builtin_ops_test.cpp for the others.
#include <doctest/doctest.h>

#include "support/rule_ops.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/kernel.hpp"
#include "tileops/ops/elementwise.hpp"

using namespace tileops;
using namespace tileops::test;

TEST_CASE("records: a record stays as it was when later calls complete, it is immutable once it is last_call") {
  ScaleTestFwdOp op(2.0);
  op(ramp(3), ramp(3));
  const SignatureCallPtr rec = op.last_call();
  for (int i = 0; i < 10; ++i) op(ramp(5, DType::float16));  // more calls than the thread's record pool holds
  CHECK(op.last_call() != rec);
  CHECK(rec->op == "ScaleTestFwdOp");
  REQUIRE(rec->tensor("x") != nullptr);
  CHECK(rec->tensor("x")->shape == Shape{3});
  CHECK(rec->tensor("x")->dtype == DType::float32);
  CHECK(rec->tensor("bias") != nullptr);
  REQUIRE(rec->index("S") != nullptr);
  CHECK(*rec->index("S") == IndexValue(Shape{3}));
}

TEST_CASE("records: an out buffer the caller passes is recorded under its output's name, not separately, and has_out says so") {
  AddFwdOp add;
  const Tensor out = Tensor::zeros({3}, DType::float32);
  add(ramp(3), ramp(3), out);
  const SignatureCallPtr with_out = add.last_call();
  CHECK(with_out->has_out);
  CHECK(with_out->tensor("out") == nullptr);
  REQUIRE(with_out->tensor("output") != nullptr);
  CHECK(with_out->tensor("output")->shape == Shape{3});
  CHECK(with_out->tensors.size() == 3);  // a, b and output
  add(ramp(3), ramp(3));
  CHECK_FALSE(add.last_call()->has_out);
  CHECK(add.last_call()->tensors.size() == 3);
}

TEST_CASE("records: iter_kernels yields a kernel once, though several call specs share its entry") {
  counters().reset();
  ScaleTestFwdOp op(2.0);
  op(ramp(2));
  op(ramp(3));  // another call spec (n = 3), the same build identity (dtype, scale)
  CHECK(counters().builds == 1);
  CHECK(op.built_entries("scale").size() == 1);
  CHECK(op.iter_kernels().size() == 1);
  op(ramp(2, DType::float16));  // another identity: another entry
  CHECK(op.iter_kernels().size() == 2);
}

TEST_CASE("records: iter_kernels does not walk the kernels a target built, built_entries lists them whatever interface is named") {
  RuleTarget target;
  ScaleTestFwdOp op(1.0);
  op(to_device(ramp(3), "rule_t:0"));
  op(to_device(ramp(4), "rule_t:0"));
  CHECK(op.serving_target() == "rule_t");
  CHECK(target.builds == 2);
  CHECK(op.iter_kernels().empty());
  CHECK(op.built_entries().size() == 2);
  CHECK(op.built_entries("scale").size() == 2);
  CHECK(op.built_entries("not_an_interface").size() == 2);
  CHECK(op.built_entries("scale")[0].key == "rule_t");
  CHECK(op.built_entries("scale")[0].kernel == nullptr);
}

namespace {

// A sub-op with its own tuning: it counts requests and does not enter tuned mode.
struct OwnTuning : ScaleTestFwdOp {
  using ScaleTestFwdOp::ScaleTestFwdOp;
  std::atomic<int> requests{0};
  void request_tune() override { ++requests; }
};

}  // namespace

TEST_CASE("records: a sub-op's own request_tune override is what the composite's request_tune reaches") {
  auto own = std::make_shared<OwnTuning>(2.0, Target{});
  RuleChainFwdOp chain({}, false);
  chain.hold("first", Identity(), own);
  ScaleTestFwdOp& plain = chain.hold("second", Identity(), nullptr, 3.0);
  chain.request_tune();
  CHECK(own->requests == 1);
  CHECK_FALSE(own->tune_requested());  // the override did not call the base
  CHECK(plain.tune_requested());
  CHECK(chain.tune_requested());
}
