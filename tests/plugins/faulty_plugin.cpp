// Plugin code that throws what is not a tileops::Error, each fault chosen by PluginTestFwdOp's
// factor (or by the device type), so that one plugin exercises every guarded call:
//   kernel type 'faulty_kernel' (cpu; serves factors >= 10, the reference serves the rest):
//     11 refusal throws std::logic_error        12 entry_for throws std::out_of_range
//     13 the constructor throws std::runtime_error  14 forward throws std::invalid_argument
//     15 forward throws 42 (no std::exception)    16 serves: returns x * 100
//   target 'faultytarget' (a builder for PluginTestFwdOp):
//     21 the builder throws std::invalid_argument  22 the kernel throws 42; otherwise a copy of x
//   its detector throws std::runtime_error for devices of type 'faultydev' (a runtime it
//   registers) and claims nothing;
//   device type 'faultymem': a runtime whose allocate throws std::bad_alloc.
#include <new>
#include <stdexcept>

#include "plugin_test_types.hpp"
#include "tileops/extend/plugin.hpp"

namespace {

using namespace tileops;
using namespace tileops::test_plugins;

class FaultyKernel final : public Kernel, public PluginTestInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static std::optional<std::string> refusal(const PluginTestCall& call) {
    if (call.factor == 11) throw std::logic_error("faulty refusal");
    return call.factor >= 10 ? std::nullopt : std::optional<std::string>("serves factors of 10 and more");
  }
  static Entry entry_for(const PluginTestCall& call) {
    if (call.factor == 12) throw std::out_of_range("faulty entry_for");
    return {Identity::of(call_identity(call)), [call] { return std::shared_ptr<Kernel>(std::make_shared<FaultyKernel>(call)); }};
  }
  explicit FaultyKernel(const PluginTestCall& call) : factor_(call.factor) {
    if (factor_ == 13) throw std::runtime_error("faulty constructor");
  }
  std::int64_t forward(std::int64_t x) override {
    if (factor_ == 14) throw std::invalid_argument("faulty forward");
    if (factor_ == 15) throw 42;
    return x * 100;
  }

 private:
  std::int64_t factor_;
};

TargetKernel build_faulty(std::span<const std::optional<TensorSpec>>, const ParamMap& params) {
  const std::int64_t factor = std::get<std::int64_t>(params.at("factor"));
  if (factor == 21) throw std::invalid_argument("faulty builder");
  return [factor](const CallArgs& args) -> OpOutputs {
    if (factor == 22) throw 42;
    const Tensor& x = args.inputs[0];
    Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
    y.copy_from(x);
    return {y};
  };
}

// A device type whose every allocation fails.
class FaultyMemory final : public DeviceRuntime {
 public:
  DeviceType type() const override { return DeviceType::intern("faultymem"); }
  int device_count() const override { return 1; }
  DeviceFacts facts(int) const override { return {0, 1, 0, "faulty memory"}; }
  void* allocate(std::size_t, int) override { throw std::bad_alloc(); }
  void deallocate(void*, std::size_t, int) noexcept override {}
  void copy_to_host(void*, const void*, std::size_t, int) override {}
  void copy_from_host(void*, const void*, std::size_t, int) override {}
  void copy_on_device(void*, const void*, std::size_t, int) override {}
};

}  // namespace

TILEOPS_PLUGIN(faulty, "0.1.0", registrar) {
  registrar.register_device_runtime(std::make_shared<HostBackedRuntime>("faultydev"));
  registrar.register_device_runtime(std::make_shared<FaultyMemory>());
  registrar.register_detector("faultytarget", [](const Device& d) -> bool {
    if (d.type().name() == "faultydev") throw std::runtime_error("faulty detector");
    return false;
  });
  registrar.register_kernel_builder(kOp, "faultytarget", build_faulty);
  registrar.register_kernel_type<FaultyKernel>(kOp, "faulty_kernel");
}
