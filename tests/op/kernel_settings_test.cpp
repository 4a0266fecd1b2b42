// How the config's disable_kernels and prefer_kernels change dispatch: a disabled key takes no
// part and says why; a preferred key wins wherever it applies, ambiguity included; both apply
// to instances constructed after the setting, never to the reference target.
#include <doctest/doctest.h>

#include "support/rule_ops.hpp"
#include "support/scoped_config.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/op_class_builder.hpp"

using namespace tileops;
using namespace tileops::test;

namespace {

// Two specific cpu implementations with no precedence between them: every call is ambiguous.
class Left final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  explicit Left(const ScaleCall&) {}
  Tensor forward(const Tensor& x, const Tensor&) override { return x; }
};

class Right final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  explicit Right(const ScaleCall&) {}
  Tensor forward(const Tensor& x, const Tensor&) override { return x; }
};

const OpClass& tied_class() {
  static const OpClass cls = OpClass::define("ScaleTestFwdOp")
                                 .plan(test_plan("ScaleTestFwdOp"))
                                 .interface<ScaleInterface>("scale")
                                 .kernel_type<Left>("left")
                                 .kernel_type<Right>("right")
                                 .build();
  return cls;
}

ScaleCall cpu_call() {
  ScaleCall call;
  call.device = Device::cpu();
  call.n = 4;
  return call;
}

Config with(std::vector<std::string> disabled, std::vector<KernelPreference> preferred) {
  Config c = config();
  c.disable_kernels = std::move(disabled);
  c.prefer_kernels = std::move(preferred);
  return c;
}

}  // namespace

TEST_CASE("kernel settings: without them two unranked implementations are ambiguous, and the message names the ways out") {
  ScaleTestFwdOp op(tied_class(), 1.0, {});
  CHECK_THROWS_WITH_AS(op.key_for("scale", cpu_call()),
                       doctest::Contains("left (in-tree), right (in-tree) all apply and none is preferred over the "
                                         "others; declare preferred_over in one of them, choose one for this op with "
                                         "prefer_kernels (ScaleTestFwdOp=<key>), or leave one out with disable_kernels"),
                       ValueError);
}

TEST_CASE("kernel settings: prefer_kernels picks the named key for its op and leaves other ops alone") {
  const ScopedConfig scoped(with({}, {{"ScaleTestFwdOp", "right"}, {"OtherFwdOp", "left"}}));
  ScaleTestFwdOp op(tied_class(), 1.0, {});
  CHECK(op.key_for("scale", cpu_call()) == "right");
}

TEST_CASE("kernel settings: a disabled key takes no part, and when nothing is left the message says who disabled it") {
  {
    const ScopedConfig scoped(with({"left"}, {}));
    ScaleTestFwdOp op(tied_class(), 1.0, {});
    CHECK(op.key_for("scale", cpu_call()) == "right");
  }
  const ScopedConfig scoped(with({"left", "right"}, {{"ScaleTestFwdOp", "left"}}));
  ScaleTestFwdOp op(tied_class(), 1.0, {});
  CHECK_THROWS_WITH_AS(op.key_for("scale", cpu_call()),
                       doctest::Contains("left: disabled by disable_kernels given to set_config, right: disabled by "
                                         "disable_kernels given to set_config"),
                       ValueError);
}

TEST_CASE("kernel settings: an instance keeps the settings it was constructed under") {
  ScaleTestFwdOp before(tied_class(), 1.0, {});
  const ScopedConfig scoped(with({}, {{"ScaleTestFwdOp", "left"}}));
  ScaleTestFwdOp after(tied_class(), 1.0, {});
  CHECK(after.key_for("scale", cpu_call()) == "left");
  CHECK_THROWS_AS(before.key_for("scale", cpu_call()), ValueError);
}

TEST_CASE("kernel settings: the reference target runs the class's kernels whatever the settings say") {
  const ScopedConfig scoped(with({"scale_reference"}, {}));
  ScaleTestFwdOp op(1.0, std::string(REFERENCE));
  CHECK(op.key_for("scale", cpu_call()) == "scale_reference");
}

TEST_CASE("kernel settings: a preferred key the op lacks is warned about once, naming the op's keys") {
  const ScopedConfig scoped(with({}, {{"ScaleTestFwdOp", "lefty"}}));
  LogCapture log;
  ScaleTestFwdOp first(tied_class(), 1.0, {});
  ScaleTestFwdOp second(tied_class(), 1.0, {});
  CHECK(log.count("prefer_kernels given to set_config names ScaleTestFwdOp=lefty, but ScaleTestFwdOp has no kernel "
                  "type of that key (its keys: left, right); the preference is ignored") == 1);
}

TEST_CASE("kernel settings: a disabled key that no built-in op or plugin has is warned about") {
  const ScopedConfig scoped(with({"no_such_kernel"}, {}));
  LogCapture log;
  ScaleTestFwdOp op(tied_class(), 1.0, {});
  CHECK(log.count("disable_kernels given to set_config names 'no_such_kernel', which no kernel type of the built-in "
                  "ops or the loaded plugins has") == 1);
}

TEST_CASE("kernel settings: every new disable_kernels setting is checked, not only the process's first one") {
  {
    const ScopedConfig first(with({"left"}, {}));
    ScaleTestFwdOp op(tied_class(), 1.0, {});
  }
  const ScopedConfig second(with({"left", "never_defined_kernel"}, {}));
  LogCapture log;
  ScaleTestFwdOp op(tied_class(), 1.0, {});
  CHECK(log.count("names 'never_defined_kernel', which no kernel type of the built-in ops or the loaded plugins "
                  "has") == 1);
}
