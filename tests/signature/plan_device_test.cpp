// The call device: call-time tensors except device: cpu ones, then the device
// parameter, then construction-time tensors, then the process accelerator's current device;
// meta tensors make a meta call. Every tensor but device: cpu ones must be on the call device.
#include <doctest/doctest.h>

#include <cstdlib>

#include "signature/plan_support.hpp"
#include "support/host_runtime.hpp"
#include "tileops/extend/device_runtime.hpp"

using namespace tileops;
using test::expect_error;
using test::meta;
using test::run_call;

namespace {

// A tensor whose storage claims to live on `device` (host memory underneath).
Tensor on(const Device& device, ShapeView shape, DType dtype = DType::float32) {
  const std::size_t nbytes = static_cast<std::size_t>(shape_numel(shape)) * dtype_size(dtype);
  auto storage = std::make_shared<Storage>(std::malloc(nbytes == 0 ? 1 : nbytes), nbytes, device, [](void* p) { std::free(p); });
  return Tensor::from_storage(storage, shape, contiguous_strides(shape), 0, dtype);
}

Device fake(int index = 0) { return Device(DeviceType::intern("fakedev"), index); }


const char* const kLookup = R"yaml(
LookupFwdOp:
  family: test
  status: spec-only
  signature:
    forall: {B: Dim, H: Dim}
    params:
      table: {dtype: float32, shape: "[H]", optional: true}
      device: {type: "device | None", default: null}
    inputs:
      lengths: {dtype: int64, shape: "[B]", device: cpu}
      x: {dtype: float32, shape: "[B, H]", optional: true}
    outputs:
      y: {dtype: float32, shape: "[B]"}
  workloads:
  - {B: 2, label: unit}
  roofline:
    flops: "B"
)yaml";

}  // namespace

TEST_CASE("the first call-time tensor decides the call device, the others must agree") {
  const auto p = test::plan("GemmFwdOp");
  const auto ok = run_call(*p, {}, {on(fake(1), {4, 8}), on(fake(1), {2, 8})});
  CHECK(ok.check.device == fake(1));
  CHECK(ok.record.device == fake(1));
  expect_error<TypeError>([&] { run_call(*p, {}, {on(fake(1), {4, 8}), test::host({2, 8}, DType::float32)}); },
                          "GemmFwdOp: input 'b' is on cpu, but the call device is fakedev:1 (from input 'a')");
  expect_error<TypeError>([&] { run_call(*p, {}, {on(fake(0), {4, 8}), on(fake(1), {2, 8})}); },
                          "GemmFwdOp: input 'b' is on fakedev:1, but the call device is fakedev:0 (from input 'a')");
}

TEST_CASE("meta tensors make the call device meta, mixing meta and real tensors is a TypeError") {
  const auto p = test::plan("GemmFwdOp");
  CHECK(run_call(*p, {}, {meta({4, 8}, DType::float32), meta({2, 8}, DType::float32)}).check.device == Device::meta());
  expect_error<TypeError>([&] { run_call(*p, {}, {test::host({4, 8}, DType::float32), meta({2, 8}, DType::float32)}); },
                          "GemmFwdOp: input 'a' is on cpu, but the call runs on meta: a call passes either meta tensors or real ones");
}

TEST_CASE("device: cpu tensors stay on cpu and do not decide the call device") {
  const auto p = SignaturePlan::from_yaml(kLookup, "LookupFwdOp");
  const Tensor lengths = test::host({2}, DType::int64);
  // x decides; lengths stays on cpu.
  CHECK(run_call(*p, {}, {lengths, on(fake(0), {2, 3})}).check.device == fake(0));
  expect_error<TypeError>([&] { run_call(*p, {}, {on(fake(0), {2}, DType::int64), on(fake(0), {2, 3})}); },
                          "LookupFwdOp: input 'lengths' must be on cpu (declared device: cpu), but is on fakedev:0");
  // Only a device: cpu tensor: the device parameter decides, then construction tensors.
  CHECK(run_call(*p, {{"device", std::string("fakedev:1")}}, {lengths, Tensor()}).check.device == fake(1));
  CHECK(run_call(*p, {{"device", fake(0)}, {"table", on(fake(1), {3})}}, {lengths, Tensor()}).check.device == fake(0));
  CHECK(run_call(*p, {{"table", on(fake(1), {3})}}, {lengths, Tensor()}).check.device == fake(1));
  // Nothing decides and the process has no accelerator: unknown.
  const auto unknown = run_call(*p, {}, {lengths, Tensor()});
  CHECK_FALSE(unknown.check.device.has_value());
  CHECK_FALSE(unknown.record.device.has_value());
  expect_error<OpNotAvailableError>([&] { p->make_outputs(unknown.check, CallArgs{}); },
                                    "LookupFwdOp: cannot allocate output 'y': the call device is unknown");
}

TEST_CASE("with nothing else to decide, the process accelerator's current device is the call device") {
  auto accel = std::make_shared<test::HostRuntime>("fakeaccel", 2, true);
  accel->set_current_device(1);
  register_device_runtime(accel);
  const auto p = test::plan("AlibiFwdOp");
  const auto c = run_call(*p, {{"seq_len", std::int64_t{4}}, {"num_heads", std::int64_t{2}}}, {});
  CHECK(c.check.device == Device(DeviceType::intern("fakeaccel"), 1));
  CHECK(run_call(*p, {{"seq_len", std::int64_t{4}}, {"num_heads", std::int64_t{2}}, {"device", std::string("cpu")}}, {}).check.device ==
        Device::cpu());
  CHECK(unregister_device_runtime(DeviceType::intern("fakeaccel")));
}

TEST_CASE("out must be on the call device") {
  const auto p = test::plan("AddFwdOp");
  expect_error<ValueError>([&] { run_call(*p, {}, {on(fake(0), {4}), on(fake(0), {4})}, test::host({4}, DType::float32)); },
                           "AddFwdOp: 'out' (the buffer of output 'output') is on cpu, but the call device is fakedev:0");
}
