// The rules of composite ops (sub-ops held for stages, their targets, records and tuning) that
// the suites elsewhere do not already check; see tests/op/records_test.cpp, call_steps_test.cpp,
// failure_test.cpp and targets_test.cpp for the others.
#include <doctest/doctest.h>

#include "support/rule_ops.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"

using namespace tileops;
using namespace tileops::test;

TEST_CASE("composite: held_delegates and a record's stages follow the stage order of delegate_types, not the order sub-ops were held") {
  RuleChainFwdOp chain({}, true, /*second_first=*/true);
  const auto held = chain.held_delegates();
  REQUIRE(held.size() == 2);
  CHECK(held[0] == chain.first);
  CHECK(held[1] == chain.second);
  // The body calls second before first: completion order differs from stage order too.
  chain.body = [](RuleChainFwdOp& self, const Tensor& x) { return (*self.first)((*self.second)(x)); };
  CHECK(chain(ramp(2)).to_doubles() == std::vector<double>{6, 12});
  const SignatureCallPtr rec = chain.last_call();
  REQUIRE(rec->stages.size() == 2);
  CHECK(rec->stages[0].stage == "first");
  CHECK(rec->stages[1].stage == "second");
}

TEST_CASE("composite: a composite in tuned mode puts each sub-op it holds afterwards in tuned mode, built or injected") {
  RuleChainFwdOp untuned({}, false);
  CHECK_FALSE(untuned.hold("first", Identity(), nullptr, 2.0).tune_requested());

  RuleChainFwdOp chain({}, false);
  chain.request_tune();
  CHECK(chain.hold("first", Identity(), nullptr, 2.0).tune_requested());
  auto injected = std::make_shared<ScaleTestFwdOp>(3.0);
  CHECK_FALSE(injected->tune_requested());
  chain.hold("second", Identity(), injected);
  CHECK(injected->tune_requested());
}

TEST_CASE("composite: a sub-op held in forward per call-time argument is built once per identity and filed under its stage") {
  RuleChainFwdOp chain({}, false);
  chain.body = [](RuleChainFwdOp& self, const Tensor& x) {
    return self.hold("second", Identity::of(std::int64_t{x.numel()}), nullptr, 3.0)(x);
  };
  CHECK(chain(ramp(2)).to_doubles() == std::vector<double>{3, 6});
  chain(ramp(3));
  CHECK(chain(ramp(2)).to_doubles() == std::vector<double>{3, 6});
  const auto held = chain.held_delegates();
  REQUIRE(held.size() == 2);  // one per element count; the third call reused the first
  const SignatureCallPtr rec = chain.last_call();
  REQUIRE(rec->stage_calls("second").size() == 1);
  CHECK(rec->stage_calls("second")[0] == held[0]->last_call());
  CHECK(rec->stage_calls("second")[0]->tensor("x")->shape == Shape{2});
  CHECK(rec->stage_calls("first").empty());
}

TEST_CASE("composite: the calls of one stage are filed in completion order, whatever order their sub-ops were held in") {
  RuleChainFwdOp chain({}, false);
  ScaleTestFwdOp& held_first = chain.hold("second", Identity::of(std::int64_t{1}), nullptr, 2.0);
  ScaleTestFwdOp& held_second = chain.hold("second", Identity::of(std::int64_t{2}), nullptr, 3.0);
  chain.body = [&](RuleChainFwdOp&, const Tensor& x) { return held_first(held_second(x)); };
  CHECK(chain(ramp(2)).to_doubles() == std::vector<double>{6, 12});
  const auto& calls = chain.last_call()->stage_calls("second");
  REQUIRE(calls.size() == 2);
  CHECK(calls[0] == held_second.last_call());
  CHECK(calls[1] == held_first.last_call());
}

TEST_CASE("composite: a composite that also declares kernels of its own raises OpNotAvailableError when its target has no builder for it") {
  RuleTarget target;
  SUBCASE("the target given to the constructor") {
    RuleMixedFwdOp op("rule_t");
    CHECK_THROWS_WITH_AS(op(to_device(ramp(2), "rule_t:0")), doctest::Contains("has no kernel builder for RuleMixedFwdOp"),
                         OpNotAvailableError);
    CHECK(op.forward_runs == 0);
    CHECK_FALSE(op.serving_target().has_value());
  }
  SUBCASE("the target detected from the device") {
    RuleMixedFwdOp op;
    CHECK_THROWS_WITH_AS(op(to_device(ramp(2), "rule_t:0")), doctest::Contains("has no kernel builder for RuleMixedFwdOp"),
                         OpNotAvailableError);
    CHECK(op.forward_runs == 0);
  }
  SUBCASE("no target claims the device: the in-tree kernels and the composition run") {
    RuleMixedFwdOp op;
    CHECK(op(ramp(2)).to_doubles() == std::vector<double>{10, 20});
    CHECK(op.serving_target() == std::string(BUILTIN));
    CHECK(op.last_call()->stage_calls("first").size() == 1);
  }
}

TEST_CASE("composite: each sub-op selects its own target, a built one inherits the composite's, an injected one keeps its own") {
  Registrar reg("rules");
  reg.register_kernel_type<ScaleShort>("ScaleTestFwdOp", "scale_short");
  RuleChainFwdOp chain(std::string(REFERENCE), false);
  auto injected = std::make_shared<ScaleTestFwdOp>(2.0, std::string(BUILTIN));
  ScaleTestFwdOp& first = chain.hold("first", Identity(), injected);
  ScaleTestFwdOp& second = chain.hold("second", Identity(), nullptr, 3.0);
  chain.first = &first;
  chain.second = &second;
  CHECK(chain(ramp(2)).to_doubles() == std::vector<double>{6, 12});
  CHECK(chain.serving_target() == std::string(REFERENCE));
  CHECK(first.serving_target() == std::string(BUILTIN));
  CHECK(second.serving_target() == std::string(REFERENCE));
  REQUIRE(first.built_entries("scale").size() == 1);
  CHECK(first.built_entries("scale")[0].key == "scale_short");  // builtin sees the registered kernel type
  REQUIRE(second.built_entries("scale").size() == 1);
  CHECK(second.built_entries("scale")[0].key == "scale_reference");  // reference ignores it
}
