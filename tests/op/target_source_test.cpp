// Errors about the selected target say where its name came from: the
// op's constructor, set_default_target, the config file (path and line) or the environment
// variable, and list the in-tree targets among the choices. A default target that builds only
// some ops is still the selected target for the others: they fail (no fallback to the in-tree kernels), and the
// message says why and what to do.
#include <doctest/doctest.h>

#include "support/host_runtime.hpp"
#include "support/scoped_config.hpp"
#include "support/temp_dir.hpp"
#include "support/test_ops.hpp"
#include "tileops/config.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"

using namespace tileops;
using namespace tileops::test;

namespace {

// A target "partial_t" whose only builder is for FillTestFwdOp.
struct PartialTarget {
  Registrar reg{"partial_vendor"};
  PartialTarget() {
    reg.register_detector("partial_t", [](const Device&) { return false; });
    reg.register_kernel_builder("FillTestFwdOp", "partial_t", [](auto, const ParamMap&) -> TargetKernel {
      return [](const CallArgs&) -> OpOutputs { return {}; };
    });
  }
};

}  // namespace

TEST_CASE("an unknown target from the constructor lists builtin, reference and the registered targets") {
  PartialTarget partial;
  ScaleTestFwdOp op(1.0, "partial");
  CHECK_THROWS_WITH_AS(op(ramp(2)),
                       doctest::Contains("ScaleTestFwdOp: target 'partial' (given to the op's constructor) is not "
                                         "registered (did you mean 'partial_t'?); the choices are builtin, reference, "
                                         "partial_t"),
                       UnknownTargetError);
}

TEST_CASE("an unknown default target names set_default_target") {
  set_default_target("nonesuch");
  ScaleTestFwdOp op(1.0);
  CHECK_THROWS_WITH_AS(op(ramp(2)),
                       doctest::Contains("target 'nonesuch' (the process default target, from set_default_target) is "
                                         "not registered"),
                       UnknownTargetError);
  set_default_target(std::nullopt);
}

TEST_CASE("set_default_target(nullopt) withdraws the process value: the config's default_target applies again") {
  Config c;
  c.default_target = "from_config";
  c.default_target_origin = "config file test.conf:1";
  const ScopedConfig scoped(c);
  set_default_target("from_process");
  CHECK(default_target_choice().source == "set_default_target");
  set_default_target(std::nullopt);
  const TargetChoice choice = default_target_choice();
  CHECK(choice.target == "from_config");
  CHECK(choice.source == "config file test.conf:1");
}

TEST_CASE("a default target from the config file names the file and the line") {
  TempDir dir;
  const auto file = dir.write("tileops.conf", "# comment\nlog_level = warn\ndefault_target = nonesuch\n");
  const ScopedConfig scoped(load_config(file));
  ScaleTestFwdOp op(1.0);
  const std::string expected =
      "target 'nonesuch' (the process default target, from config file " + file.string() + ":3) is not registered";
  CHECK_THROWS_WITH_AS(op(ramp(2)), doctest::Contains(expected.c_str()), UnknownTargetError);
}

TEST_CASE("a default target from TILEOPS_DEFAULT_TARGET names the variable") {
  const ScopedEnv env("TILEOPS_DEFAULT_TARGET", "nonesuch");
  const ScopedConfig scoped(load_config());
  ScaleTestFwdOp op(1.0);
  CHECK_THROWS_WITH_AS(op(ramp(2)),
                       doctest::Contains("(the process default target, from environment variable "
                                         "TILEOPS_DEFAULT_TARGET) is not registered"),
                       UnknownTargetError);
}

TEST_CASE("a default target that builds only some ops fails the others, even on cpu tensors, and says why") {
  PartialTarget partial;
  TempDir dir;
  const auto file = dir.write("tileops.conf", "default_target = partial_t\n");
  const ScopedConfig scoped(load_config(file));
  ScaleTestFwdOp op(1.0);
  const std::string expected = "ScaleTestFwdOp: target 'partial_t' (the process default target, from config file " +
                               file.string() +
                               ":1) has no kernel builder for ScaleTestFwdOp (it builds: FillTestFwdOp; no registered target "
                               "builds ScaleTestFwdOp); the process "
                               "default applies to every op constructed without a target, and a selected target never "
                               "falls back to the in-tree kernels: construct this op with target 'builtin'";
  CHECK_THROWS_WITH_AS(op(ramp(2)), doctest::Contains(expected.c_str()), OpNotAvailableError);
  CHECK_FALSE(op.serving_target().has_value());
  ScaleTestFwdOp builtin(1.0, std::string(BUILTIN));  // the fix the message gives
  CHECK(builtin(ramp(2)).to_doubles() == std::vector<double>{1, 2});
}

TEST_CASE("set_config without an origin records set_config as the default target's source") {
  Config c = config();
  c.default_target = "nonesuch";
  c.default_target_origin.clear();
  const ScopedConfig scoped(c);
  CHECK(default_target_choice().source == "set_config");
  ScaleTestFwdOp op(1.0);
  CHECK_THROWS_WITH_AS(op(ramp(2)), doctest::Contains("(the process default target, from set_config)"),
                       UnknownTargetError);
}
