// kernel_for and the kernel cache (kernel types, entries, built entries), and dispatch.
#include <doctest/doctest.h>

#include "support/host_runtime.hpp"
#include "support/test_ops.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/op_class_builder.hpp"

using namespace tileops;
using namespace tileops::test;

namespace {

// Competes with ScaleShort on short rows and declares that it wins there.
class ScaleShortPreferred final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr KeyList preferred_over{"scale_short"};
  explicit ScaleShortPreferred(const ScaleCall& call) : scale_(call.scale) {}
  static std::optional<std::string> refusal(const ScaleCall& call) {
    return call.n <= 8 ? std::nullopt : std::optional<std::string>("serves rows of at most 8 elements");
  }
  Tensor forward(const Tensor& x, const Tensor& bias) override { return scale_tensor(x, bias, scale_); }

 private:
  double scale_;
};

// The same applicability as ScaleShort, no preference: ties with it.
class ScaleShortTwin final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  explicit ScaleShortTwin(const ScaleCall& call) : scale_(call.scale) {}
  static std::optional<std::string> refusal(const ScaleCall& call) { return ScaleShort::refusal(call); }
  Tensor forward(const Tensor& x, const Tensor& bias) override { return scale_tensor(x, bias, scale_); }

 private:
  double scale_;
};

// Only on sm_90 "gpu_t" devices.
class ScaleHopper final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"gpu_t"};
  static constexpr ArchList supported_archs{90};
  explicit ScaleHopper(const ScaleCall& call) : scale_(call.scale) {}
  Tensor forward(const Tensor& x, const Tensor& bias) override { return scale_tensor(x, bias, scale_); }

 private:
  double scale_;
};

// Runs on the fake accelerator "accel_t" and remembers the device it was built for.
class AccelKernel final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"accel_t"};
  explicit AccelKernel(const ScaleCall& call) : device(*call.device) {}
  Tensor forward(const Tensor& x, const Tensor&) override { return x.clone(); }
  Device device;
};

ScaleCall cpu_call(std::int64_t n) {
  ScaleCall call;
  call.device = Device::cpu();
  call.n = n;
  return call;
}

}  // namespace

TEST_CASE("a cache hit is one lookup: dispatch (refusal) runs once per distinct call spec") {
  counters().reset();
  ScaleTestFwdOp op(2.0);
  op(ramp(3));
  op(ramp(3));
  op(ramp(3));
  CHECK(counters().refusals == 1);
  op(ramp(4));  // another call spec: dispatch again
  CHECK(counters().refusals == 2);
}

TEST_CASE("calls with the same identity share one entry, another identity builds another") {
  counters().reset();
  ScaleTestFwdOp op(2.0);
  op(ramp(3));
  op(ramp(5));  // n differs, identity (dtype, scale) does not
  CHECK(counters().builds == 1);
  REQUIRE(op.built_entries("scale").size() == 1);
  CHECK(op.built_entries("scale")[0].key == "scale_reference");
  op(ramp(3, DType::float16));
  CHECK(counters().builds == 2);
  CHECK(op.built_entries("scale").size() == 2);
  CHECK(op.iter_kernels().size() == 2);
}

// An op of two interfaces whose forward builds an entry of each.
class PassThrough final : public Kernel, public OtherInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  explicit PassThrough(const ScaleCall&) {}
  Tensor forward(const Tensor& x) override { return x; }
};

struct TwoInterfaceOp final : ScaleTestFwdOp {
  static const OpClass& two_class() {
    static const OpClass cls = OpClass::define("ScaleTestFwdOp")
                                   .plan(test_plan("ScaleTestFwdOp"))
                                   .interface<ScaleInterface>("scale")
                                   .interface<OtherInterface>("other")
                                   .kernel_type<ScaleReference>("scale_reference")
                                   .kernel_type<PassThrough>("pass_through")
                                   .build();
    return cls;
  }
  TwoInterfaceOp() : ScaleTestFwdOp(two_class(), 1.0, {}) {}
  OpOutputs forward(const CallArgs& args) override {
    ScaleCall call;
    call.device = Device::cpu();
    call.n = args.inputs[0].numel();
    const Tensor y = kernel_for<ScaleInterface>("scale", call).forward(args.inputs[0], args.inputs[1]);
    return {kernel_for<OtherInterface>("other", call).forward(y)};
  }
};

TEST_CASE("built_entries with no interface lists every built entry, in interface order") {
  TwoInterfaceOp op;
  CHECK(op.built_entries().empty());
  op(ramp(3));
  const auto all = op.built_entries();
  REQUIRE(all.size() == 2);
  CHECK(all[0].key == "scale_reference");
  CHECK(all[1].key == "pass_through");
  CHECK(op.built_entries("other").size() == 1);
}

TEST_CASE("built_entries of an interface the op does not declare is OpNotAvailableError") {
  ScaleTestFwdOp op(1.0);
  op(ramp(1));
  CHECK_THROWS_AS(op.built_entries("no_such_interface"), OpNotAvailableError);
}

TEST_CASE("applicability and precedence select exactly one implementation") {
  Registrar reg("test");
  reg.register_kernel_type<ScaleShort>("ScaleTestFwdOp", "scale_short");
  reg.register_kernel_type<ScaleShortPreferred>("ScaleTestFwdOp", "scale_shortest");
  ScaleTestFwdOp op;
  CHECK(op.key_for("scale", cpu_call(4)) == "scale_shortest");   // both apply; preferred_over decides
  CHECK(op.key_for("scale", cpu_call(12)) == "scale_short");     // only scale_short applies
  CHECK(op.key_for("scale", cpu_call(100)) == "scale_reference");  // the general one serves the rest
}

TEST_CASE("two applicable implementations without precedence: dispatch is ambiguous") {
  Registrar reg("test");
  reg.register_kernel_type<ScaleShort>("ScaleTestFwdOp", "scale_short");
  reg.register_kernel_type<ScaleShortTwin>("ScaleTestFwdOp", "scale_twin");
  ScaleTestFwdOp op;
  CHECK_THROWS_WITH_AS(op.key_for("scale", cpu_call(4)), doctest::Contains("dispatch is ambiguous"), ValueError);
  CHECK_THROWS_WITH_AS(op.key_for("scale", cpu_call(4)), doctest::Contains("scale_short (plugin 'test'), scale_twin (plugin 'test')"), ValueError);
  CHECK(op.key_for("scale", cpu_call(100)) == "scale_reference");
}

TEST_CASE("no key runs on the device type: in-tree kernels do not run on it") {
  Registrar reg("test");
  reg.register_device_runtime(std::make_shared<HostRuntime>("gpu_t", 1, false, 80));
  ScaleTestFwdOp op;
  ScaleCall call;
  call.device = Device::parse("gpu_t:0");
  CHECK_THROWS_WITH_AS(op.key_for("scale", call), doctest::Contains("in-tree kernels do not run on gpu_t:0"),
                       OpNotAvailableError);
}

TEST_CASE("availability filters by device type and architecture, as the device's runtime reports it") {
  Registrar reg("test");
  auto runtime = std::make_shared<HostRuntime>("gpu_t", 1, false, 80);
  reg.register_device_runtime(runtime);
  reg.register_kernel_type<ScaleHopper>("ScaleTestFwdOp", "scale_hopper");
  ScaleTestFwdOp op;
  ScaleCall call;
  call.device = Device::parse("gpu_t:0");
  runtime->set_arch(90);
  CHECK(op.key_for("scale", call) == "scale_hopper");
  runtime->set_arch(80);
  CHECK_THROWS_WITH_AS(op.key_for("scale", call), doctest::Contains("no implementation serves this call"), ValueError);
  CHECK_THROWS_WITH_AS(op.key_for("scale", call), doctest::Contains("scale_hopper: supports archs [90], not 80"),
                       ValueError);
  CHECK_THROWS_AS(op.key_for("scale", call), ValueError);
}

TEST_CASE("kernel_for names an interface the op does not declare: OpNotAvailableError") {
  struct WrongName : ScaleTestFwdOp {
    using ScaleTestFwdOp::ScaleTestFwdOp;
    OpOutputs forward(const CallArgs& args) override {
      return {kernel_for<ScaleInterface>("scale_v2", ScaleCall{}).forward(args.inputs[0], Tensor())};
    }
  };
  WrongName op(1.0, {});
  CHECK_THROWS_WITH_AS(op(ramp(2)), doctest::Contains("has no kernel interface 'scale_v2'"), OpNotAvailableError);
}

TEST_CASE("kernel_for with a call spec of another type is a TypeError naming the request type") {
  struct OtherCall final : CallSpec {
    int x = 0;
    auto fields() const { return std::tie(x); }
  };
  struct WrongType : ScaleTestFwdOp {
    using ScaleTestFwdOp::ScaleTestFwdOp;
    OpOutputs forward(const CallArgs&) override {
      OtherCall call;
      call.device = Device::cpu();
      kernel_entry("scale", typeid(ScaleInterface), call, call_spec_ops<OtherCall>());
      return {};
    }
  };
  WrongType op(1.0, {});
  CHECK_THROWS_WITH_AS(op(ramp(2)), doctest::Contains("takes a tileops::test::ScaleCall call spec"), TypeError);
}

TEST_CASE("a call spec without a device gets the accelerator's current device, and entries are built on it") {
  auto accel = std::make_shared<HostRuntime>("accel_t", 2, true);
  Registrar reg("test");
  reg.register_device_runtime(accel);
  reg.register_kernel_type<AccelKernel>("ScaleTestFwdOp", "accel");
  struct NoDevice : ScaleTestFwdOp {
    using ScaleTestFwdOp::ScaleTestFwdOp;
    OpOutputs forward(const CallArgs& args) override {
      ScaleCall call;  // no device
      call.n = args.inputs[0].numel();
      return {kernel_for<ScaleInterface>("scale", call).forward(args.inputs[0], Tensor())};
    }
  };
  accel->set_current_device(1);
  NoDevice op(1.0, {});
  op(ramp(2).to(Device::parse("accel_t:1")));
  REQUIRE(op.iter_kernels().size() == 1);
  CHECK(dynamic_cast<AccelKernel*>(op.iter_kernels()[0])->device == Device::parse("accel_t:1"));
  CHECK(op.built_entries("scale")[0].identity.find("accel_t:1") != std::string::npos);
}
