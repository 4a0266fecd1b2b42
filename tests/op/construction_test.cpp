// Op construction: its five steps (registry, parameters, implementation table, instance key,
// empty binding), and the contract checks of the implementation table.
#include <doctest/doctest.h>

#include "support/test_ops.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/op_class_builder.hpp"

using namespace tileops;
using namespace tileops::test;

namespace {

// A second implementation of ScaleInterface for precedence and contract tests.
template <int Tag, bool General = false>
class ExtraScale final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr bool general = General;
  explicit ExtraScale(const ScaleCall& call) : scale_(call.scale) {}
  Tensor forward(const Tensor& x, const Tensor& bias) override { return scale_tensor(x, bias, scale_); }

 private:
  double scale_;
};

class PrefersOther final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr KeyList preferred_over{"other_key"};
  explicit PrefersOther(const ScaleCall&) {}
  Tensor forward(const Tensor& x, const Tensor&) override { return x; }
};

template <int Tag>
class CycleKernel final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr KeyList preferred_over{Tag == 0 ? "cycle_b" : "cycle_a"};
  explicit CycleKernel(const ScaleCall&) {}
  Tensor forward(const Tensor& x, const Tensor&) override { return x; }
};

class OtherKernel final : public Kernel, public OtherInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  explicit OtherKernel(const ScaleCall&) {}
  Tensor forward(const Tensor& x) override { return x; }
};

class GeneralWithPreference final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr bool general = true;
  static constexpr KeyList preferred_over{"scale_reference"};
  explicit GeneralWithPreference(const ScaleCall&) {}
  Tensor forward(const Tensor& x, const Tensor&) override { return x; }
};

OpClass::Builder scale_class() {
  return std::move(OpClass::define("ScaleTestFwdOp").plan(test_plan("ScaleTestFwdOp")).interface<ScaleInterface>("scale"));
}

}  // namespace

TEST_CASE("construction step 2: parameters are checked at construction and defaults filled in") {
  ScaleTestFwdOp op;
  CHECK(op.params().at("scale") == Value(1.0));
  CHECK_THROWS_WITH_AS(ScaleTestFwdOp(-2.0), doctest::Contains("scale > 0"), ValueError);
}

TEST_CASE("construction step 3: registered kernel types enter instances constructed after registration") {
  ScaleTestFwdOp before;
  Registrar reg("test");
  reg.register_kernel_type<ScaleShort>("ScaleTestFwdOp", "scale_short");
  ScaleTestFwdOp after;
  ScaleCall call;
  call.device = Device::cpu();
  call.n = 4;
  CHECK(before.key_for("scale", call) == "scale_reference");
  CHECK(after.key_for("scale", call) == "scale_short");
  call.n = 64;  // the short kernel refuses; the general reference serves the rest
  CHECK(after.key_for("scale", call) == "scale_reference");
}

TEST_CASE("construction step 3: a registered key equal to an in-tree key fails construction") {
  Registrar reg("vendor");
  reg.register_kernel_type<ScaleShort>("ScaleTestFwdOp", "scale_reference");
  CHECK_THROWS_WITH_AS(ScaleTestFwdOp(), doctest::Contains("reuse keys it has"), ValueError);
}

TEST_CASE("registering the same key twice under one op is a BackendError") {
  Registrar reg("vendor");
  reg.register_kernel_type<ScaleShort>("ScaleTestFwdOp", "scale_short");
  CHECK_THROWS_WITH_AS(reg.register_kernel_type<ScaleShort>("ScaleTestFwdOp", "scale_short"),
                       doctest::Contains("plugin 'vendor' cannot register key 'scale_short' for ScaleTestFwdOp: plugin "
                                         "'vendor' registered that key first"),
                       BackendError);
}

TEST_CASE("construction step 3: a key implementing none of the op's interfaces fails construction") {
  static const OpClass cls = scale_class().kernel_type<ScaleReference>("scale_reference").kernel_type<OtherKernel>("other").build();
  CHECK_THROWS_WITH_AS(ScaleTestFwdOp(cls, 1.0, {}), doctest::Contains("keys implement none of its kernel interfaces"),
                       TypeError);
}

TEST_CASE("construction step 3: two general implementations of one interface fail construction") {
  static const OpClass cls =
      scale_class().kernel_type<ScaleReference>("scale_reference").kernel_type<ExtraScale<1, true>>("general_two").build();
  CHECK_THROWS_WITH_AS(ScaleTestFwdOp(cls, 1.0, {}), doctest::Contains("has more than one general implementation"),
                       ValueError);
}

TEST_CASE("construction step 3: preferred_over must name another key of the same interface") {
  static const OpClass cls = scale_class().kernel_type<PrefersOther>("prefers_other").build();
  CHECK_THROWS_WITH_AS(ScaleTestFwdOp(cls, 1.0, {}), doctest::Contains("is preferred over 'other_key'"), ValueError);
}

TEST_CASE("construction step 3: a general implementation may not declare preferred_over") {
  static const OpClass cls = scale_class().kernel_type<GeneralWithPreference>("general_pref").kernel_type<ExtraScale<2>>("scale_reference").build();
  CHECK_THROWS_WITH_AS(ScaleTestFwdOp(cls, 1.0, {}), doctest::Contains("declares preferred_over"), ValueError);
}

TEST_CASE("construction step 3: preferences that form a cycle fail construction") {
  static const OpClass cls = scale_class().kernel_type<CycleKernel<0>>("cycle_a").kernel_type<CycleKernel<1>>("cycle_b").build();
  CHECK_THROWS_WITH_AS(ScaleTestFwdOp(cls, 1.0, {}), doctest::Contains("preferences form a cycle through"), ValueError);
}

TEST_CASE("an op class holding kernel types without interfaces is rejected when defined") {
  CHECK_THROWS_WITH_AS(OpClass::define("ScaleTestFwdOp").plan(test_plan("ScaleTestFwdOp")).kernel_type<ScaleReference>("r").build(),
                       doctest::Contains("declare interfaces instead"), TypeError);
}

TEST_CASE("compile-time contracts: implementations derive Kernel and one interface, call spec fields key a cache") {
  struct NotAKernel : ScaleInterface {
    Tensor forward(const Tensor& x, const Tensor&) override { return x; }
  };
  struct BadCall final : CallSpec {
    Tensor held;
    auto fields() const { return std::tie(held); }
  };
  static_assert(KernelImplementation<ScaleReference>);
  static_assert(!KernelImplementation<NotAKernel>, "does not implement: not a Kernel");
  static_assert(CallSpecType<ScaleCall>);
  static_assert(!CallSpecType<BadCall>, "a Tensor field cannot key a dispatch cache");
  CHECK(true);
}

TEST_CASE("construction step 4: every instance gets a key never reused in the process") {
  std::string first;
  {
    ScaleTestFwdOp op;
    first = op.instance_key();
    CHECK(first.rfind("ScaleTestFwdOp#", 0) == 0);
  }
  ScaleTestFwdOp again;
  CHECK(again.instance_key() != first);
}

TEST_CASE("Op::live_count counts the ops constructed and not yet destroyed") {
  const std::size_t before = Op::live_count();
  {
    ScaleTestFwdOp one;
    ScaleTestFwdOp two;
    CHECK(Op::live_count() == before + 2);
  }
  CHECK(Op::live_count() == before);
}

TEST_CASE("construction steps 3 and 5: construction builds empty caches, selects nothing and builds no kernel") {
  counters().reset();
  ScaleTestFwdOp op;
  CHECK_FALSE(op.serving_target().has_value());
  CHECK(op.built_entries("scale").empty());
  CHECK(op.held_delegates().empty());
  CHECK(op.iter_kernels().empty());
  CHECK_THROWS_WITH_AS(op.last_call(), doctest::Contains("no call has completed yet"), RuntimeError);
  CHECK(counters().builds == 0);
}

TEST_CASE("construction does not probe devices: a target for a device type without a runtime is accepted") {
  ScaleTestFwdOp op(1.0, "nowhere_target");
  CHECK(op.target() == "nowhere_target");
  CHECK_FALSE(op.serving_target().has_value());
}

TEST_CASE("injected_parameters is an allowlist of extra constructor arguments") {
  CHECK_NOTHROW(ChainTestFwdOp({}, std::make_shared<ScaleTestFwdOp>(2.0)));
  struct Probe : ScaleTestFwdOp {
    Probe() { check_injected_parameter("experts"); }
  };
  CHECK_THROWS_WITH_AS(Probe(), doctest::Contains("'experts' is neither a manifest parameter nor in"), TypeError);
}

TEST_CASE("compile_op_names: ops with a call-time tensor input and no composition get boundary operators") {
  CHECK_FALSE(ScaleTestFwdOp::op_class().compile_op_names().empty());
  CHECK(ScaleTestFwdOp::op_class().compile_op_names().front().rfind("tileops::testing_scale_test_fwd", 0) == 0);
  CHECK(ChainTestFwdOp::op_class().compile_op_names().empty());  // composite
  CHECK(FillTestFwdOp::op_class().compile_op_names().empty());   // no tensor input
}
