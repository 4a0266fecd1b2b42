// Targets: selection order, detection, builders and their cache, the guarantees
// before a target kernel runs, and the two ways a backend joins.
#include <doctest/doctest.h>

#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "tileops/errors.hpp"
#include "support/host_runtime.hpp"
#include "support/test_ops.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"

using namespace tileops;
using namespace tileops::test;

namespace {

// A target "acme_t" claiming devices of type acme_t, whose builder counts builds and records
// what it was given; its kernel computes y = x * scale * 10 so that tests can tell it ran.
struct AcmeTarget {
  std::atomic<int> builds{0};
  std::atomic<int> runs{0};
  std::vector<std::optional<TensorSpec>> last_inputs;
  ParamMap last_params;
  std::atomic<bool> saw_contiguous{true};
  Registrar reg{"acme_test"};

  explicit AcmeTarget(bool with_builder = true) {
    reg.register_device_runtime(std::make_shared<HostRuntime>("acme_t", 2, false));
    reg.register_detector("acme_t", [](const Device& d) { return d.type().name() == "acme_t"; });
    if (!with_builder) {
      reg.register_kernel_builder("FillTestFwdOp", "acme_t", [](auto, const ParamMap&) -> TargetKernel {
        return [](const CallArgs&) -> OpOutputs { return {}; };
      });
      return;
    }
    reg.register_kernel_builder("ScaleTestFwdOp", "acme_t", [this](std::span<const std::optional<TensorSpec>> inputs,
                                                                const ParamMap& params) -> TargetKernel {
      ++builds;
      last_inputs.assign(inputs.begin(), inputs.end());
      last_params = params;
      const double scale = std::get<double>(params.at("scale"));
      return [this, scale](const CallArgs& args) -> OpOutputs {
        ++runs;
        for (const Tensor& t : args.inputs) {
          if (t.defined() && !t.is_contiguous()) saw_contiguous = false;
        }
        return {scale_tensor(args.inputs[0], args.inputs[1], scale * 10)};
      };
    });
  }
};

Tensor on(const Tensor& t, const char* device) { return t.to(Device::parse(device)); }

}  // namespace

TEST_CASE("target: a detected target serves the whole op, the body does not run") {
  AcmeTarget acme;
  ScaleTestFwdOp op(2.0);
  const Tensor y = op(on(ramp(3), "acme_t:1"));
  CHECK(op.serving_target() == "acme_t");
  CHECK(op.forward_runs == 0);
  CHECK(acme.runs == 1);
  CHECK(y.to_doubles() == std::vector<double>{20, 40, 60});
  CHECK(y.device() == Device::parse("acme_t:1"));
}

TEST_CASE("no target claims the device: the in-tree kernels serve, serving_target is builtin") {
  AcmeTarget acme;
  ScaleTestFwdOp op(2.0);
  op(ramp(2));
  CHECK(op.serving_target() == std::string(BUILTIN));
  CHECK(acme.builds == 0);
}

TEST_CASE("selection order: constructor target, then the process default, then detection") {
  AcmeTarget acme;
  set_default_target(std::string(BUILTIN));
  {
    ScaleTestFwdOp defaulted(1.0);
    CHECK_THROWS_AS(defaulted(on(ramp(2), "acme_t:0")), OpNotAvailableError);  // builtin has no kernel on acme_t
    CHECK_FALSE(defaulted.serving_target().has_value());
    ScaleTestFwdOp explicit_target(1.0, "acme_t");
    explicit_target(on(ramp(2), "acme_t:0"));
    CHECK(explicit_target.serving_target() == "acme_t");
  }
  set_default_target("acme_t");
  {
    ScaleTestFwdOp defaulted(1.0);
    defaulted(on(ramp(2), "acme_t:0"));
    CHECK(defaulted.serving_target() == "acme_t");
    ScaleTestFwdOp forced(1.0, std::string(BUILTIN));
    forced(ramp(2));
    CHECK(forced.serving_target() == std::string(BUILTIN));
  }
  set_default_target(std::nullopt);
  CHECK(default_target() == std::nullopt);
}

TEST_CASE("the target stays fixed once selected") {
  AcmeTarget acme;
  ScaleTestFwdOp op(1.0);
  op(on(ramp(2), "acme_t:0"));
  CHECK(op.serving_target() == "acme_t");
  set_default_target(std::string(BUILTIN));
  op(on(ramp(2), "acme_t:0"));
  CHECK(op.serving_target() == "acme_t");
  set_default_target(std::nullopt);
}

TEST_CASE("a target name nobody registered is an UnknownTargetError when the op selects it") {
  ScaleTestFwdOp op(1.0, "no_such_target");
  CHECK_THROWS_WITH_AS(op(ramp(2)), doctest::Contains("target 'no_such_target' (given to the op's constructor) is not registered"),
                       UnknownTargetError);
  CHECK_FALSE(op.serving_target().has_value());
}

TEST_CASE("several detectors claiming the device is an AmbiguousTargetError") {
  AcmeTarget acme;
  Registrar other("other_vendor");
  other.register_detector("other_t", [](const Device& d) { return d.type().name() == "acme_t"; });
  ScaleTestFwdOp op;
  CHECK_THROWS_WITH_AS(op(on(ramp(2), "acme_t:0")), doctest::Contains("targets acme_t, other_t all claim"),
                       AmbiguousTargetError);
  CHECK_FALSE(op.serving_target().has_value());
}

TEST_CASE("a selected target without a builder for an op with kernels is OpNotAvailableError, never a fallback") {
  AcmeTarget acme(false);
  ScaleTestFwdOp op(1.0, "acme_t");
  CHECK_THROWS_WITH_AS(op(ramp(2)), doctest::Contains("target 'acme_t' (given to the op's constructor) has no kernel builder for ScaleTestFwdOp"),
                       OpNotAvailableError);
  CHECK(op.forward_runs == 0);
  CHECK_FALSE(op.serving_target().has_value());
}

TEST_CASE("backends: a target without a builder for the op names the op and the targets that build it") {
  AcmeTarget acme;
  Registrar fill_only("fill_vendor");
  fill_only.register_kernel_builder("FillTestFwdOp", "fill_t", [](auto, const ParamMap&) -> TargetKernel {
    return [](const CallArgs&) -> OpOutputs { return {}; };
  });
  ScaleTestFwdOp op(1.0, "fill_t");
  CHECK_THROWS_WITH_AS(op(ramp(2)),
                       doctest::Contains("target 'fill_t' (given to the op's constructor) has no kernel builder for "
                                         "ScaleTestFwdOp (it builds: FillTestFwdOp; the targets that build "
                                         "ScaleTestFwdOp: acme_t)"),
                       OpNotAvailableError);
}

TEST_CASE("a composite without kernels runs its own composition when its target has no builder for it") {
  AcmeTarget acme;
  ChainTestFwdOp chain("acme_t");
  const Tensor y = chain(on(ramp(2), "acme_t:0"));
  CHECK(chain.serving_target() == "acme_t");
  CHECK(chain.forward_runs == 1);
  CHECK(chain.first().serving_target() == "acme_t");  // built sub-ops inherit the target
  CHECK(y.to_doubles() == std::vector<double>{600, 1200});
}

TEST_CASE("the builder receives a TensorSpec per input in signature order, nullopt for absent ones, and params by name") {
  AcmeTarget acme;
  ScaleTestFwdOp op(2.5);
  op(on(ramp(3, DType::bfloat16), "acme_t:1"));
  REQUIRE(acme.last_inputs.size() == 2);
  REQUIRE(acme.last_inputs[0].has_value());
  CHECK(acme.last_inputs[0]->shape == Shape{3});
  CHECK(acme.last_inputs[0]->dtype == DType::bfloat16);
  CHECK(acme.last_inputs[0]->device == Device::parse("acme_t:1"));
  CHECK_FALSE(acme.last_inputs[1].has_value());
  CHECK(acme.last_params.at("scale") == Value(2.5));
}

TEST_CASE("target kernels are cached by device, each input's dtype and shape, and absent slots") {
  AcmeTarget acme;
  ScaleTestFwdOp op(1.0);
  op(on(ramp(3), "acme_t:0"));
  op(on(ramp(3), "acme_t:0"));
  CHECK(acme.builds == 1);
  op(on(ramp(4), "acme_t:0"));                      // new shape
  op(on(ramp(3), "acme_t:1"));                      // new device
  op(on(ramp(3), "acme_t:0"), on(ramp(3), "acme_t:0"));  // bias present
  CHECK(acme.builds == 4);
  CHECK(op.built_entries().size() == 4);
  CHECK(op.built_entries()[0].key == "acme_t");
}

TEST_CASE("before a target kernel runs, every unwritten input is contiguous and on the call device") {
  AcmeTarget acme;
  ScaleTestFwdOp op(1.0);
  const Tensor base = Tensor::from_doubles(std::vector<double>{1, 2, 3, 4, 5, 6}, std::vector<std::int64_t>{2, 3},
                                           DType::float32)
                          .to(Device::parse("acme_t:0"));
  const Tensor y = op(base.transpose(0, 1));
  CHECK(acme.saw_contiguous);
  CHECK(y.to_doubles() == std::vector<double>{10, 40, 20, 50, 30, 60});
  CHECK_THROWS_AS(op(on(ramp(3), "acme_t:0"), ramp(3)), TypeError);  // bias on cpu, x on acme_t
}

TEST_CASE("no accelerator and no device: the body runs, kernel selection fails, the target stays unselected") {
  FillTestFwdOp op(4);
  CHECK_THROWS_WITH_AS(op(), doctest::Contains("call device is unknown"), OpNotAvailableError);
  CHECK(op.forward_runs == 1);
  CHECK_FALSE(op.serving_target().has_value());
  FillTestFwdOp placed(4, Device::cpu());
  CHECK(placed().to_doubles() == std::vector<double>{1, 1, 1, 1});
  CHECK(placed.serving_target() == std::string(BUILTIN));
}

TEST_CASE("registered_targets lists targets with builders, per op or overall") {
  AcmeTarget acme;
  CHECK(registered_targets("ScaleTestFwdOp") == std::vector<std::string>{"acme_t"});
  CHECK(registered_targets("ChainTestFwdOp").empty());
  const auto all = registered_targets();
  CHECK(std::find(all.begin(), all.end(), "acme_t") != all.end());
  CHECK(target_ops("acme_t") == std::vector<std::string>{"ScaleTestFwdOp"});
}

TEST_CASE("a rolled-back registrar leaves nothing behind") {
  {
    AcmeTarget acme;
    CHECK(find_device_runtime(DeviceType::intern("acme_t")) != nullptr);
  }
  CHECK(find_device_runtime(DeviceType::intern("acme_t")) == nullptr);
  CHECK(registered_targets("ScaleTestFwdOp").empty());
  CHECK_THROWS_AS(register_kernel_builder("ScaleTestFwdOp", std::string(BUILTIN), {}), BackendError);
}

TEST_CASE("the reference target runs the op's own kernel types, ignoring registered ones") {
  Registrar reg("test");
  reg.register_kernel_type<ScaleShort>("ScaleTestFwdOp", "scale_short");
  ScaleTestFwdOp fast(2.0);
  ScaleTestFwdOp reference(2.0, std::string(REFERENCE));
  ScaleCall call;
  call.device = Device::cpu();
  call.n = 4;
  CHECK(fast.key_for("scale", call) == "scale_short");
  CHECK(reference.key_for("scale", call) == "scale_reference");
  CHECK(reference(ramp(2)).to_doubles() == std::vector<double>{2, 4});
  CHECK(reference.serving_target() == std::string(REFERENCE));
  ChainTestFwdOp chain{std::string(REFERENCE)};
  CHECK(chain.first().target() == std::string(REFERENCE));
  CHECK_THROWS_AS(register_detector(std::string(REFERENCE), [](const Device&) { return false; }), BackendError);
}

TEST_CASE("a detector's tileops error keeps its kind and names the detector's target and owner") {
  AcmeTarget acme;
  Registrar fussy("fussy_vendor");
  fussy.register_detector("fussy_t", [](const Device&) -> bool { throw ValueError("the device is in a bad mood"); });
  ScaleTestFwdOp op;
  CHECK_THROWS_WITH_AS(op(on(ramp(2), "acme_t:0")),
                       doctest::Contains("ScaleTestFwdOp: the detector of target 'fussy_t' (plugin 'fussy_vendor'), asked "
                                         "about acme_t:0, failed: the device is in a bad mood"),
                       ValueError);
  CHECK_FALSE(op.serving_target().has_value());
}

TEST_CASE("a detector's error keeps its most derived kind, a manifest error its problems too") {
  AcmeTarget acme;
  const ManifestProblem problem{"vendor.yaml", "ScaleTestFwdOp", "signature", "no inputs"};
  const std::vector<std::pair<std::function<void()>, std::string_view>> throws = {
      {[] { throw ConfigError("bad key"); }, "ConfigError"},
      {[] { throw OutOfMemoryError("no room"); }, "OutOfMemoryError"},
      {[] { throw UnknownTargetError("no such target"); }, "UnknownTargetError"},
      {[&] { throw ManifestError({problem}); }, "ManifestError"},
      {[] { throw Error("plain"); }, "Error"},
  };
  for (const auto& [raise, kind] : throws) {
    CAPTURE(kind);
    Registrar vendor("moody_vendor");
    vendor.register_detector("moody_t", [&](const Device&) -> bool { raise(); return false; });
    ScaleTestFwdOp op;
    try {
      op(on(ramp(2), "acme_t:0"));
      FAIL("the detector's error did not reach the caller");
    } catch (const Error& e) {
      CHECK(error_kind(e) == kind);
      CHECK(std::string(e.what()).find("the detector of target 'moody_t' (plugin 'moody_vendor')") != std::string::npos);
      if (const auto* m = dynamic_cast<const ManifestError*>(&e)) {
        REQUIRE(m->problems().size() == 1);
        CHECK(m->problems()[0].str() == problem.str());
      }
    }
  }
}

TEST_CASE("a detector that calls an op needing detection is refused, naming the detector, instead of recursing") {
  AcmeTarget acme;
  Registrar nosy("nosy_vendor");
  nosy.register_detector("nosy_t", [](const Device& d) {
    ScaleTestFwdOp inner;
    inner(ramp(2).to(d));
    return false;
  });
  ScaleTestFwdOp op;
  CHECK_THROWS_WITH_AS(op(on(ramp(2), "acme_t:0")),
                       doctest::Contains("the detector of target 'nosy_t' (plugin 'nosy_vendor') called ScaleTestFwdOp "
                                         "without a target, which would ask the detectors again without end"),
                       BackendError);
  CHECK_FALSE(op.serving_target().has_value());
}
