// The rules of how an op selects a kernel (availability, applicability, precedence) and of
// what a kernel type declares that the suites elsewhere do not
// already check; see tests/op/kernel_cache_test.cpp and construction_test.cpp for the others.
#include <doctest/doctest.h>

#include "support/rule_ops.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/op_class_builder.hpp"

using namespace tileops;
using namespace tileops::test;

namespace {

// Serves rows of at most 8 elements and wins over "rows_any" there.
class RowsShort final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr KeyList preferred_over{"rows_any"};
  explicit RowsShort(const ScaleCall& call) : scale_(call.scale) {}
  static std::optional<std::string> refusal(const ScaleCall& call) {
    return call.n <= 8 ? std::nullopt : std::optional<std::string>("serves rows of at most 8 elements");
  }
  Tensor forward(const Tensor& x, const Tensor& bias) override { return scale_tensor(x, bias, scale_); }

 private:
  double scale_;
};

// Serves every row on cpu; not general.
class RowsAny final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  explicit RowsAny(const ScaleCall& call) : scale_(call.scale) {}
  Tensor forward(const Tensor& x, const Tensor& bias) override { return scale_tensor(x, bias, scale_); }

 private:
  double scale_;
};

// While it lives, a cuda runtime of two devices reporting `arch` stands in for the cuda
// plugin's, if one loaded (the machine may have fewer GPUs, or none).
struct CudaStandIn {
  std::shared_ptr<DeviceRuntime> real;
  explicit CudaStandIn(int arch) {
    for (auto& rt : device_runtimes()) {
      if (rt->type() == DeviceType::intern("cuda")) real = rt;
    }
    unregister_device_runtime(DeviceType::intern("cuda"));
    register_device_runtime(std::make_shared<HostRuntime>("cuda", 2, false, arch));
  }
  ~CudaStandIn() {
    unregister_device_runtime(DeviceType::intern("cuda"));
    if (real) register_device_runtime(real);
  }
};

// Declares nothing but its interface and a constructor.
class Bare final : public Kernel, public ScaleInterface {
 public:
  explicit Bare(const ScaleCall&) {}
  Tensor forward(const Tensor& x, const Tensor&) override { return x; }
};

// On "arch_t" devices: sm_90 only, preferred over "arch_any"; and every architecture.
class ArchPreferred final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"arch_t"};
  static constexpr ArchList supported_archs{90};
  static constexpr KeyList preferred_over{"arch_any"};
  explicit ArchPreferred(const ScaleCall&) {}
  Tensor forward(const Tensor& x, const Tensor&) override { return x; }
};

class ArchAny final : public Kernel, public ScaleInterface {
 public:
  static constexpr DeviceTypes devices{"arch_t"};
  explicit ArchAny(const ScaleCall&) {}
  Tensor forward(const Tensor& x, const Tensor&) override { return x.clone(); }
};

OpClass::Builder scale_class() {
  return std::move(OpClass::define("ScaleTestFwdOp").plan(test_plan("ScaleTestFwdOp")).interface<ScaleInterface>("scale"));
}

ScaleCall call_on(const char* device, std::int64_t n) {
  ScaleCall call;
  call.device = Device::parse(device);
  call.n = n;
  return call;
}

}  // namespace

TEST_CASE("dispatch: selection does not depend on the order the implementations are declared in") {
  static const OpClass forward_order = scale_class().kernel_type<RowsShort>("rows_short").kernel_type<RowsAny>("rows_any").build();
  static const OpClass reverse_order = scale_class().kernel_type<RowsAny>("rows_any").kernel_type<RowsShort>("rows_short").build();
  for (const OpClass* cls : {&forward_order, &reverse_order}) {
    ScaleTestFwdOp op(*cls, 1.0, {});
    CHECK(op.key_for("scale", call_on("cpu", 4)) == "rows_short");
    CHECK(op.key_for("scale", call_on("cpu", 8)) == "rows_short");
    CHECK(op.key_for("scale", call_on("cpu", 9)) == "rows_any");
  }
}

TEST_CASE("dispatch: an implementation that declares nothing runs on cuda devices of every architecture and serves every call") {
  static const OpClass cls = scale_class().kernel_type<Bare>("bare").build();
  ScaleTestFwdOp op(cls, 1.0, {});
  CHECK_THROWS_WITH_AS(op.key_for("scale", call_on("cpu", 4)), doctest::Contains("in-tree kernels do not run on cpu"),
                       OpNotAvailableError);
  for (int arch : {70, 80, 90, 100}) {
    CAPTURE(arch);
    const CudaStandIn facts(arch);
    CHECK(op.key_for("scale", call_on("cuda:0", 1)) == "bare");
    CHECK(op.key_for("scale", call_on("cuda:1", 1 << 20)) == "bare");
  }
}

TEST_CASE("dispatch: the default entry_for takes the whole call spec as the build identity") {
  static const OpClass cls = scale_class().kernel_type<ScaleReference>("scale_reference").kernel_type<ScaleShort>("scale_short").build();
  counters().reset();
  ScaleTestFwdOp op(cls, 1.0, {});
  op(ramp(2));
  op(ramp(3));  // another n: another identity for ScaleShort, which keeps the default entry_for
  CHECK(counters().builds == 2);
  op(ramp(2));
  CHECK(counters().builds == 2);
  const auto entries = op.built_entries("scale");
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].key == "scale_short");
  CHECK(entries[1].key == "scale_short");
  CHECK(entries[0].identity != entries[1].identity);
}

TEST_CASE("dispatch: availability filters before precedence: a preferred implementation the architecture lacks takes no part") {
  Registrar reg("rules");
  auto runtime = std::make_shared<HostRuntime>("arch_t", 1, false, 80);
  reg.register_device_runtime(runtime);
  reg.register_kernel_type<ArchPreferred>("ScaleTestFwdOp", "arch_preferred");
  reg.register_kernel_type<ArchAny>("ScaleTestFwdOp", "arch_any");
  ScaleTestFwdOp op(1.0);
  runtime->set_arch(90);
  CHECK(op.key_for("scale", call_on("arch_t:0", 4)) == "arch_preferred");
  runtime->set_arch(80);
  CHECK(op.key_for("scale", call_on("arch_t:0", 4)) == "arch_any");
  CHECK(op.key_for("scale", call_on("arch_t:0", 4)) == "arch_any");  // the runtime says sm_80
  op(Tensor::zeros({4}, DType::float32, Device::parse("arch_t:0")));
  REQUIRE(op.built_entries("scale").size() == 1);
  CHECK(op.built_entries("scale")[0].key == "arch_any");
}
