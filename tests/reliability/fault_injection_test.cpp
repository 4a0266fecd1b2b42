// Allocation failure injected into a device runtime: the call fails with
// the runtime's error, the failure undo runs (a call that selected the target forgets the
// selection and what was built under it), nothing leaks, and the next call succeeds.
#include <doctest/doctest.h>

#include <memory>

#include "reliability/faulty_runtime.hpp"
#include "support/test_ops.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"

using namespace tileops;
using namespace tileops::test;

namespace {

// ScaleTestFwdOp's kernel on faulty_t devices: allocates its output on the call's device.
class ScaleOnFaulty final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"faulty_t"};
  explicit ScaleOnFaulty(const ScaleCall& call) : scale_(call.scale) {}
  Tensor forward(const Tensor& x, const Tensor& bias) override { return scale_tensor(x, bias, scale_); }

 private:
  double scale_;
};

// The runtime, registered for the test's lifetime, and the in-tree kernel type that runs on it.
struct FaultyDevice {
  std::shared_ptr<FaultyRuntime> runtime = std::make_shared<FaultyRuntime>("faulty_t");
  Registrar reg{"faulty_test"};
  FaultyDevice() {
    reg.register_device_runtime(runtime);
    reg.register_kernel_type<ScaleOnFaulty>("ScaleTestFwdOp", "scale_on_faulty");
  }
  Tensor input(std::int64_t n) const { return ramp(n).to(Device::parse("faulty_t:0")); }
};

// Target faulty_target claims faulty_t devices; its builder's kernel allocates on the device.
struct FaultyTarget {
  std::shared_ptr<FaultyRuntime> runtime = std::make_shared<FaultyRuntime>("faulty_t");
  Registrar reg{"faulty_target_test"};
  std::atomic<int> builds{0};
  FaultyTarget() {
    reg.register_device_runtime(runtime);
    reg.register_detector("faulty_target", [](const Device& d) { return d.type().name() == "faulty_t"; });
    reg.register_kernel_builder("ScaleTestFwdOp", "faulty_target",
                                [this](std::span<const std::optional<TensorSpec>>, const ParamMap& params) -> TargetKernel {
                                  ++builds;
                                  const double scale = std::get<double>(params.at("scale"));
                                  return [scale](const CallArgs& args) -> OpOutputs {
                                    return {scale_tensor(args.inputs[0], args.inputs[1], scale)};
                                  };
                                });
  }
  Tensor input(std::int64_t n) const { return ramp(n).to(Device::parse("faulty_t:0")); }
};

}  // namespace

TEST_CASE("an allocation failure in the call that selects the target undoes the selection, the next call succeeds") {
  FaultyDevice dev;
  {
    ScaleTestFwdOp op(2.0);
    const Tensor x = dev.input(4);
    dev.runtime->fail_after(0);
    CHECK_THROWS_WITH_AS(op(x), doctest::Contains("faulty_t:0 cannot allocate 16 bytes (injected failure)"),
                         OutOfMemoryError);
    CHECK(dev.runtime->injected == 1);
    CHECK_FALSE(op.serving_target().has_value());  // the failure undo reset the binding
    CHECK(op.built_entries("scale").empty());
    CHECK_THROWS_AS(op.last_call(), RuntimeError);
    dev.runtime->heal();
    const Tensor y = op(x);
    CHECK(y.to_doubles() == std::vector<double>{2, 4, 6, 8});
    CHECK(op.serving_target() == std::string(BUILTIN));
    CHECK(op.built_entries("scale").size() == 1);
    CHECK(op.last_call()->tensors.size() == 2);
  }
  CHECK(dev.runtime->live_blocks == 0);
}

TEST_CASE("an allocation failure after the selection keeps the target, the entries and last_call") {
  FaultyDevice dev;
  {
    ScaleTestFwdOp op(3.0);
    const Tensor x = dev.input(2);
    op(x);
    const SignatureCallPtr good = op.last_call();
    dev.runtime->fail_after(0);
    for (int i = 0; i < 3; ++i) CHECK_THROWS_AS(op(x), OutOfMemoryError);
    CHECK(op.serving_target() == std::string(BUILTIN));
    CHECK(op.built_entries("scale").size() == 1);
    CHECK(op.last_call() == good);
    dev.runtime->heal();
    CHECK(op(x).to_doubles() == std::vector<double>{3, 6});
    CHECK(op.last_call() != good);
  }
  CHECK(dev.runtime->live_blocks == 0);
}

TEST_CASE("a runtime's bare std::bad_alloc reaches the caller as an OutOfMemoryError naming device and bytes") {
  FaultyDevice dev;
  {
    ScaleTestFwdOp op(1.0);
    const Tensor x = dev.input(8);
    dev.runtime->fail_after(0, FaultyRuntime::Failure::bad_alloc);
    CHECK_THROWS_WITH_AS(op(x), doctest::Contains("faulty_t:0 cannot allocate 32 bytes"), OutOfMemoryError);
    CHECK_THROWS_WITH_AS(Tensor::empty({3}, DType::float64, Device::parse("faulty_t:0")),
                         doctest::Contains("cannot allocate 24 bytes"), OutOfMemoryError);
    dev.runtime->heal();
    CHECK(op(x).numel() == 8);
  }
  CHECK(dev.runtime->live_blocks == 0);
}

TEST_CASE("a target kernel's allocation failure undoes the target selection and the built target kernels") {
  FaultyTarget target;
  {
    ScaleTestFwdOp op(2.0);
    const Tensor x = target.input(3);
    target.runtime->fail_after(0);
    CHECK_THROWS_AS(op(x), OutOfMemoryError);
    CHECK_FALSE(op.serving_target().has_value());
    CHECK(op.built_entries("scale").empty());
    CHECK(target.builds == 1);
    target.runtime->heal();
    CHECK(op(x).to_doubles() == std::vector<double>{2, 4, 6});
    CHECK(op.serving_target() == "faulty_target");
    CHECK(target.builds == 2);  // rebuilt: the failed selection's kernels were forgotten
  }
  CHECK(target.runtime->live_blocks == 0);
}

TEST_CASE("an allocation failure inside a sub-op resets the composite and its held sub-ops") {
  FaultyDevice dev;
  {
    ChainTestFwdOp chain;
    ChainTestFwdOp healthy;
    const Tensor x = dev.input(2);
    const std::vector<double> want = healthy(ramp(2)).to_doubles();
    // The first sub-op's output succeeds, the second's fails.
    dev.runtime->fail_after(1);
    CHECK_THROWS_AS(chain(x), OutOfMemoryError);
    CHECK_FALSE(chain.serving_target().has_value());
    CHECK_FALSE(chain.first().serving_target().has_value());
    CHECK_FALSE(chain.second().serving_target().has_value());
    CHECK(chain.first().built_entries("scale").empty());
    dev.runtime->heal();
    CHECK(chain(x).to_doubles() == want);
    CHECK(chain.last_call()->stages.size() == 2);
  }
  CHECK(dev.runtime->live_blocks == 0);
}

TEST_CASE("every allocation of a call failing in turn leaves the op usable each time") {
  FaultyDevice dev;
  {
    ChainTestFwdOp chain;
    const Tensor x = dev.input(4);
    const std::vector<double> want = ChainTestFwdOp()(ramp(4)).to_doubles();
    int failures = 0;
    for (std::int64_t n = 0; n < 4; ++n) {
      dev.runtime->fail_after(n);
      try {
        chain(x);
      } catch (const OutOfMemoryError&) {
        ++failures;
      }
      dev.runtime->heal();
      CHECK(chain(x).to_doubles() == want);
    }
    CHECK(failures == 2);  // the chain makes two allocations per call: n = 0 and 1 fail, 2 and 3 do not
  }
  CHECK(dev.runtime->live_blocks == 0);
}
