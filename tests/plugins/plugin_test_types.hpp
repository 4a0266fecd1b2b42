// What the test plugins register: a host-memory device runtime for a new device type, a tiny
// kernel interface with one implementation, and a target builder. Compiled into each plugin.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <tuple>

#include "tileops/extend/backend.hpp"
#include "tileops/extend/device_runtime.hpp"
#include "tileops/extend/kernel.hpp"

namespace tileops::test_plugins {

// The op every test plugin registers for: the test suite defines its class
// (tests/support/plugin_test_fwd_op.hpp), the tileops program knows it from
// tests/data/plugin_manifests.
inline constexpr const char* kOp = "PluginTestFwdOp";

// A device type whose memory is plain host memory, so that tests can allocate on it.
class HostBackedRuntime final : public DeviceRuntime {
 public:
  explicit HostBackedRuntime(std::string_view type) : type_(DeviceType::intern(type)) {}
  DeviceType type() const override { return type_; }
  int device_count() const override { return 1; }
  DeviceFacts facts(int) const override { return {0, 1, 0, "test plugin device"}; }
  void* allocate(std::size_t nbytes, int) override {
    return nbytes == 0 ? nullptr : ::operator new(nbytes, std::align_val_t{64});
  }
  void deallocate(void* ptr, std::size_t, int) noexcept override {
    if (ptr != nullptr) ::operator delete(ptr, std::align_val_t{64});
  }
  void copy_to_host(void* dst, const void* src, std::size_t n, int) override { std::memcpy(dst, src, n); }
  void copy_from_host(void* dst, const void* src, std::size_t n, int) override { std::memcpy(dst, src, n); }
  void copy_on_device(void* dst, const void* src, std::size_t n, int) override { std::memcpy(dst, src, n); }
  bool host_accessible() const override { return true; }

 private:
  DeviceType type_;
};

struct PluginTestCall final : CallSpec {
  std::int64_t factor = 1;
  auto fields() const { return std::tie(factor); }
};

class PluginTestInterface : public KernelInterface {
 public:
  using Interface = PluginTestInterface;
  using Request = PluginTestCall;
  static constexpr std::string_view kName = "PluginTestInterface";
  // Returns x times the call's factor.
  virtual std::int64_t forward(std::int64_t x) = 0;
};

class PluginTestKernel final : public Kernel, public PluginTestInterface {
 public:
  static constexpr DeviceTypes devices{"plugdev"};
  explicit PluginTestKernel(const PluginTestCall& call) : factor_(call.factor) {}
  std::int64_t forward(std::int64_t x) override { return x * factor_; }

 private:
  std::int64_t factor_;
};

// A target builder whose kernels return no outputs.
inline TargetKernel build_empty_kernel(std::span<const std::optional<TensorSpec>>, const ParamMap&) {
  return [](const CallArgs&) { return OpOutputs{}; };
}

}  // namespace tileops::test_plugins
