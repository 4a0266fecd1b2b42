// The rules of the two ways a backend joins (a kernel type, a whole-op target; see
// docs/plugin-guide.md) that the suites elsewhere do not already
// check; see tests/op/targets_test.cpp, target_source_test.cpp and tests/plugin_host/*.cpp for
// the others.
#include <doctest/doctest.h>

#include "support/rule_ops.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/rms_norm.hpp"

using namespace tileops;
using namespace tileops::test;

TEST_CASE("backends: an empty write on a device a target claims runs neither the target nor forward, and fixes no target") {
  RuleTarget target;
  ScaleTestFwdOp op(2.0);
  const Tensor y = op(Tensor::empty({0, 4}, DType::float32, Device::parse("rule_t:1")));
  CHECK(y.shape() == Shape{0, 4});
  CHECK(y.device() == Device::parse("rule_t:1"));
  CHECK(target.builds == 0);
  CHECK(target.runs == 0);
  CHECK(op.forward_runs == 0);
  CHECK_FALSE(op.serving_target().has_value());
  CHECK(op.last_call()->tensor("y")->shape == Shape{0, 4});
  op(to_device(ramp(2), "rule_t:1"));  // the first call that runs an implementation fixes it
  CHECK(op.serving_target() == "rule_t");
  CHECK(target.builds == 1);
}

TEST_CASE("backends: an input the call writes reaches the target as the caller passed it, an unwritten one arrives contiguous") {
  Registrar reg("rules");
  reg.register_device_runtime(std::make_shared<HostRuntime>("relu_t", 1, false));
  reg.register_detector("relu_t", [](const Device& d) { return d.type().name() == "relu_t"; });
  std::vector<bool> contiguous;
  std::vector<std::shared_ptr<Storage>> storages;
  reg.register_kernel_builder("ReluFwdOp", "relu_t", [&](auto, const ParamMap& params) -> TargetKernel {
    const bool inplace = std::get<bool>(params.at("inplace"));
    return [&, inplace](const CallArgs& args) -> OpOutputs {
      const Tensor& x = args.inputs[0];
      contiguous.push_back(x.is_contiguous());
      storages.push_back(x.storage());
      if (!inplace) return {x.clone()};
      for (std::int64_t i = 0; i < x.shape()[0]; ++i) {
        for (std::int64_t j = 0; j < x.shape()[1]; ++j) {
          const Tensor row = x.slice(0, i, i + 1).slice(1, j, j + 1);
          if (row.get(0) < 0) row.set(0, 0.0);
        }
      }
      return {x};
    };
  });
  const Tensor base = Tensor::from_doubles(std::vector<double>{-1, 2, -3, 4, -5, 6}, std::vector<std::int64_t>{2, 3},
                                           DType::float32)
                          .to(Device::parse("relu_t:0"));
  const Tensor view = base.transpose(0, 1);  // [3, 2], not contiguous
  REQUIRE_FALSE(view.is_contiguous());

  ReluFwdOp inplace(/*inplace=*/true);
  const Tensor out = inplace(view);
  REQUIRE(contiguous.size() == 1);
  CHECK_FALSE(contiguous[0]);              // written: as the caller passed it
  CHECK(storages[0] == base.storage());    // the caller's own memory
  CHECK(out.storage() == base.storage());  // the alias is the input
  CHECK(base.to_doubles() == std::vector<double>{0, 2, 0, 4, 0, 6});

  ReluFwdOp plain;
  plain(view);
  REQUIRE(contiguous.size() == 2);
  CHECK(contiguous[1]);  // not written: made contiguous before the target kernel runs
  CHECK(storages[1] != base.storage());
}

TEST_CASE("backends: parameters reach the builder by name as the instance holds them, a null default arrives as null") {
  Registrar reg("rules");
  reg.register_device_runtime(std::make_shared<HostRuntime>("norm_t", 1, false));
  reg.register_detector("norm_t", [](const Device& d) { return d.type().name() == "norm_t"; });
  std::vector<ParamMap> seen;
  reg.register_kernel_builder("RMSNormFwdOp", "norm_t", [&](auto, const ParamMap& params) -> TargetKernel {
    seen.push_back(params);
    return [](const CallArgs& args) -> OpOutputs { return {args.inputs[0].clone()}; };
  });
  RMSNormFwdOp defaulted({4});
  defaulted(Tensor::zeros({2, 4}, DType::float32, Device::parse("norm_t:0")));
  RMSNormFwdOp given({4}, 1e-3);
  given(Tensor::zeros({2, 4}, DType::float32, Device::parse("norm_t:0")));
  REQUIRE(seen.size() == 2);
  CHECK(std::holds_alternative<std::monostate>(seen[0].at("eps")));
  CHECK(seen[0].at("normalized_shape") == Value(std::vector<std::int64_t>{4}));
  CHECK(seen[1].at("eps") == Value(1e-3));
}

TEST_CASE("backends: each detector is asked once while an op instance settles its target, and not again once it is fixed") {
  RuleTarget target;
  std::atomic<int> other_asked{0};
  Registrar other("other_rules");
  other.register_detector("other_rule_t", [&](const Device&) {
    ++other_asked;
    return false;
  });
  ScaleTestFwdOp op(1.0);
  op(to_device(ramp(2), "rule_t:0"));
  CHECK(target.detects == 1);
  CHECK(other_asked == 1);
  op(to_device(ramp(3), "rule_t:0"));
  op(to_device(ramp(2), "rule_t:1"));
  CHECK(target.detects == 1);
  CHECK(other_asked == 1);
  ScaleTestFwdOp another(1.0);
  another(to_device(ramp(2), "rule_t:0"));
  CHECK(target.detects == 2);
  CHECK(other_asked == 2);
  ScaleTestFwdOp named(1.0, "rule_t");  // a target given to the constructor skips detection
  named(to_device(ramp(2), "rule_t:0"));
  CHECK(target.detects == 2);
  CHECK(other_asked == 2);
}

namespace {

// A host-memory runtime for "facts_t" that counts how often its device facts are read.
class FactsCountingRuntime final : public DeviceRuntime {
 public:
  DeviceType type() const override { return host_.type(); }
  int device_count() const override { return host_.device_count(); }
  DeviceFacts facts(int index) const override {
    ++reads;
    return host_.facts(index);
  }
  void* allocate(std::size_t n, int i) override { return host_.allocate(n, i); }
  void deallocate(void* p, std::size_t n, int i) noexcept override { host_.deallocate(p, n, i); }
  void copy_to_host(void* d, const void* s, std::size_t n, int i) override { host_.copy_to_host(d, s, n, i); }
  void copy_from_host(void* d, const void* s, std::size_t n, int i) override { host_.copy_from_host(d, s, n, i); }
  void copy_on_device(void* d, const void* s, std::size_t n, int i) override { host_.copy_on_device(d, s, n, i); }
  bool host_accessible() const override { return true; }
  mutable std::atomic<int> reads{0};

 private:
  HostRuntime host_{"facts_t", 1, false, 90};
};

class FactsKernel final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"facts_t"};
  explicit FactsKernel(const ScaleCall&) {}
  Tensor forward(const Tensor& x, const Tensor&) override { return x.clone(); }
};

}  // namespace

TEST_CASE("backends: nothing reads the device's hardware facts on the way to a target's builder or kernel") {
  auto runtime = std::make_shared<FactsCountingRuntime>();
  Registrar reg("rules");
  reg.register_device_runtime(runtime);
  reg.register_detector("facts_target", [](const Device& d) { return d.type().name() == "facts_t"; });
  reg.register_kernel_builder("ScaleTestFwdOp", "facts_target", [](auto, const ParamMap&) -> TargetKernel {
    return [](const CallArgs& args) -> OpOutputs { return {args.inputs[0].clone()}; };
  });
  reg.register_kernel_type<FactsKernel>("ScaleTestFwdOp", "facts_kernel");
  const Tensor x = Tensor::zeros({4}, DType::float32, Device::parse("facts_t:0"));
  ScaleTestFwdOp op(1.0);
  op(x);
  op(x);
  CHECK(op.serving_target() == "facts_target");
  CHECK(runtime->reads == 0);
  // The in-tree path reads them on a kernel-cache miss, as dispatch needs the architecture:
  // the count above is not blind.
  ScaleTestFwdOp in_tree(1.0, std::string(BUILTIN));
  in_tree(x);
  CHECK(in_tree.built_entries("scale")[0].key == "facts_kernel");
  CHECK(runtime->reads > 0);
}

TEST_CASE("backends: target=builtin on a device without in-tree kernels says so and names the targets that build the op") {
  RuleTarget target;
  ScaleTestFwdOp op(1.0, std::string(BUILTIN));
  CHECK_THROWS_WITH_AS(op(to_device(ramp(2), "rule_t:0")), doctest::Contains("in-tree kernels do not run on rule_t:0"),
                       OpNotAvailableError);
  CHECK_THROWS_WITH_AS(op(to_device(ramp(2), "rule_t:0")), doctest::Contains("known targets for this op: [rule_t]"),
                       OpNotAvailableError);
  CHECK(target.builds == 0);
}

TEST_CASE("backends: an op written only for external backends raises OpNotAvailableError when no target serves it") {
  Registrar reg("rules");
  reg.register_device_runtime(std::make_shared<HostRuntime>("only_t", 1, false));
  reg.register_detector("only_t", [](const Device& d) { return d.type().name() == "only_t"; });
  std::atomic<int> runs{0};
  reg.register_kernel_builder("RuleBackendOnlyFwdOp", "only_t", [&](auto, const ParamMap&) -> TargetKernel {
    return [&](const CallArgs& args) -> OpOutputs {
      ++runs;
      return {args.inputs[0].clone()};
    };
  });
  RuleBackendOnlyFwdOp served;
  CHECK(served(to_device(ramp(2), "only_t:0")).to_doubles() == std::vector<double>{1, 2});
  CHECK(served.serving_target() == "only_t");
  CHECK(runs == 1);
  CHECK(served.forward_runs == 0);

  RuleBackendOnlyFwdOp unclaimed;  // cpu: no detector claims it, so the in-tree path would serve
  CHECK_THROWS_WITH_AS(unclaimed(ramp(2)), doctest::Contains("RuleBackendOnlyFwdOp"), OpNotAvailableError);
  CHECK_THROWS_WITH_AS(unclaimed(ramp(2)), doctest::Contains("known targets for this op: [only_t]"), OpNotAvailableError);
  CHECK(unclaimed.forward_runs == 0);
  CHECK_FALSE(unclaimed.serving_target().has_value());

  RuleBackendOnlyFwdOp forced{std::string(BUILTIN)};
  CHECK_THROWS_AS(forced(to_device(ramp(2), "only_t:0")), OpNotAvailableError);
  CHECK(forced.forward_runs == 0);
}
