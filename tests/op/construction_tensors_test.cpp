// Construction-time tensors and the call device: a construction-time
// tensor that does not declare `device: cpu` is copied to the call device, once per device, and
// the instance keeps the copy; the target builder and forward both see it there.
#include <doctest/doctest.h>

#include "support/host_runtime.hpp"
#include "support/test_ops.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"

using namespace tileops;
using namespace tileops::test;

namespace {

Tensor on(const Tensor& t, const char* device) { return t.to(Device::parse(device)); }

// Target "offset_t" claims devices of type offset_t; its OffsetTestFwdOp builder keeps the
// offset it was given, and its kernel computes y = x + offset with it.
struct OffsetTarget {
  std::vector<Tensor> offsets_built_with;
  Registrar reg{"offset_test"};

  OffsetTarget() {
    reg.register_device_runtime(std::make_shared<HostRuntime>("offset_t", 2, false));
    reg.register_detector("offset_t", [](const Device& d) { return d.type().name() == "offset_t"; });
    reg.register_kernel_builder("OffsetTestFwdOp", "offset_t",
                                [this](std::span<const std::optional<TensorSpec>>, const ParamMap& params) -> TargetKernel {
                                  const Tensor offset = std::get<Tensor>(params.at("offset"));
                                  offsets_built_with.push_back(offset);
                                  return [offset](const CallArgs& args) -> OpOutputs {
                                    const Tensor& x = args.inputs[0];
                                    Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
                                    for (std::int64_t i = 0; i < x.numel(); ++i) y.set(i, x.get(i) + offset.get(i));
                                    return {y};
                                  };
                                });
  }
};

}  // namespace

TEST_CASE("call device: the target builder receives a construction-time tensor on the call device") {
  OffsetTarget target;
  const Tensor offset = ramp(3);
  OffsetTestFwdOp op(offset);
  const Tensor y = op(on(ramp(3), "offset_t:1"));
  CHECK(op.serving_target() == "offset_t");
  REQUIRE(target.offsets_built_with.size() == 1);
  CHECK(target.offsets_built_with[0].device() == Device::parse("offset_t:1"));
  CHECK(target.offsets_built_with[0].to_doubles() == std::vector<double>{1, 2, 3});
  CHECK(y.to_doubles() == std::vector<double>{2, 4, 6});
  op(on(ramp(3), "offset_t:0"));  // a second device: its own copy
  REQUIRE(target.offsets_built_with.size() == 2);
  CHECK(target.offsets_built_with[1].device() == Device::parse("offset_t:0"));
  CHECK(std::get<Tensor>(op.params().at("offset")).data_ptr() == offset.data_ptr());  // construction's value stays
}

TEST_CASE("instance state: the instance copies a construction-time tensor once per call device and keeps the copy") {
  Registrar reg("plain_test");
  reg.register_device_runtime(std::make_shared<HostRuntime>("plain_t", 1, false));
  const Tensor offset = ramp(3);
  OffsetTestFwdOp op(offset);
  CHECK(op(on(ramp(3), "plain_t:0")).to_doubles() == std::vector<double>{2, 4, 6});
  CHECK(op.serving_target() == std::string(BUILTIN));
  const Tensor first = op.seen_offset;
  CHECK(first.device() == Device::parse("plain_t:0"));
  CHECK(first.data_ptr() != offset.data_ptr());
  op(on(ramp(3), "plain_t:0"));
  CHECK(op.seen_offset.data_ptr() == first.data_ptr());  // kept, not copied again
  op(ramp(3));
  CHECK(op.seen_offset.data_ptr() == offset.data_ptr());  // already on the call device: no copy
}

TEST_CASE("call device: a construction-time tensor on another device follows a cpu call device") {
  Registrar reg("plain_test");
  reg.register_device_runtime(std::make_shared<HostRuntime>("plain_t", 1, false));
  const Tensor offset = ramp(3);
  OffsetTestFwdOp op(offset.to(Device::parse("plain_t:0")));
  op(ramp(3));  // x decides the call device (cpu); the offset follows it
  CHECK(op.seen_offset.device() == Device::cpu());
}
