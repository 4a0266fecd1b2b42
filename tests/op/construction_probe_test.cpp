// The rule that construction probes no device: compiling a plan checks every workload
// row with a call on meta, so a tensor-less op's rows never ask the accelerator runtime which
// devices it has or which one is current.
#include <doctest/doctest.h>

#include <atomic>

#include "signature/signature_plan.hpp"
#include "support/test_ops.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/device_runtime.hpp"

using namespace tileops;
using namespace tileops::test;

namespace {

// An accelerator runtime that counts the device queries made of it.
class CountingRuntime final : public DeviceRuntime {
 public:
  DeviceType type() const override { return DeviceType::intern("probe_t"); }
  int device_count() const override {
    ++queries;
    return 1;
  }
  int current_device() const override {
    ++queries;
    return 0;
  }
  DeviceFacts facts(int) const override { return {}; }
  void* allocate(std::size_t, int) override { return nullptr; }
  void deallocate(void*, std::size_t, int) noexcept override {}
  void copy_to_host(void*, const void*, std::size_t, int) override {}
  void copy_from_host(void*, const void*, std::size_t, int) override {}
  void copy_on_device(void*, const void*, std::size_t, int) override {}
  bool is_accelerator() const override { return true; }

  mutable std::atomic<int> queries{0};
};

constexpr const char* kTensorless = R"yaml(
ProbeFillFwdOp:
  family: testing
  status: implemented
  signature:
    params:
      n: {type: int}
      device: {type: "device | None", default: null}
    outputs:
      y: {dtype: float32, shape: "[n]"}
  workloads:
  - {n: 4, label: four}
  - {n: 8, label: eight}
  roofline:
    flops: "n"
)yaml";

}  // namespace

TEST_CASE("checking a tensor-less op's workload rows asks the accelerator runtime nothing") {
  auto runtime = std::make_shared<CountingRuntime>();
  Registrar reg("probe");
  reg.register_device_runtime(runtime);
  const auto plan = SignaturePlan::from_yaml(kTensorless, "ProbeFillFwdOp");
  CHECK(plan->workload_cases().size() == 2);
  CHECK(runtime->queries == 0);
}

TEST_CASE("constructing a tensor-less op asks the accelerator runtime nothing") {
  auto runtime = std::make_shared<CountingRuntime>();
  Registrar reg("probe");
  reg.register_device_runtime(runtime);
  FillTestFwdOp op(4);
  CHECK(runtime->queries == 0);
}
