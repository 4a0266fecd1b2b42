// Tensor::copy_from between two devices of one runtime: the runtime's copy_between_devices
// moves the bytes when it can (no trip through the host), and a runtime that declines is
// served through the host as before.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tileops/extend/backend.hpp"
#include "tileops/extend/device_runtime.hpp"
#include "tileops/tensor.hpp"

using namespace tileops;

namespace {

// Two devices whose memory the host must not touch directly; counts each kind of copy.
class TwoDevices final : public DeviceRuntime {
 public:
  TwoDevices(std::string type, bool peer) : type_(DeviceType::intern(type)), peer_(peer) {}
  DeviceType type() const override { return type_; }
  int device_count() const override { return 2; }
  DeviceFacts facts(int) const override { return {}; }
  void* allocate(std::size_t n, int) override { return n ? std::malloc(n) : nullptr; }
  void deallocate(void* p, std::size_t, int) noexcept override { std::free(p); }
  void copy_to_host(void* d, const void* s, std::size_t n, int) override { ++to_host, std::memmove(d, s, n); }
  void copy_from_host(void* d, const void* s, std::size_t n, int) override { ++from_host, std::memmove(d, s, n); }
  void copy_on_device(void* d, const void* s, std::size_t n, int) override { std::memmove(d, s, n); }
  bool copy_between_devices(void* d, int dst_index, const void* s, int src_index, std::size_t n) override {
    if (!peer_) return false;
    CHECK(dst_index != src_index);
    ++between;
    std::memmove(d, s, n);
    return true;
  }
  bool host_accessible() const override { return false; }

  std::atomic<int> to_host{0}, from_host{0}, between{0};

 private:
  DeviceType type_;
  bool peer_;
};

}  // namespace

TEST_CASE("A copy between two devices of a runtime goes through its copy_between_devices, not the host") {
  auto runtime = std::make_shared<TwoDevices>("peer_t", true);
  Registrar reg("test");
  reg.register_device_runtime(runtime);
  const std::vector<double> values{1, 2, 3, 4, 5, 6};
  const Tensor on0 = Tensor::from_doubles(values, {2, 3}, DType::float32).to(Device::parse("peer_t:0"));
  const int uploads = runtime->from_host;
  const Tensor on1 = on0.to(Device::parse("peer_t:1"));
  CHECK(on1.device() == Device::parse("peer_t:1"));
  CHECK(runtime->between == 1);
  CHECK(runtime->from_host == uploads);
  CHECK(runtime->to_host == 0);
  const Tensor back = on1.to(Device::cpu());
  for (std::int64_t i = 0; i < 6; ++i) CHECK(back.get(i) == values[static_cast<std::size_t>(i)]);
}

TEST_CASE("A runtime without copies between its devices is served through the host") {
  auto runtime = std::make_shared<TwoDevices>("staged_t", false);
  Registrar reg("test");
  reg.register_device_runtime(runtime);
  const std::vector<double> values{7, 8, 9};
  const Tensor on0 = Tensor::from_doubles(values, {3}, DType::float32).to(Device::parse("staged_t:0"));
  const Tensor on1 = on0.to(Device::parse("staged_t:1"));
  CHECK(runtime->between == 0);
  CHECK(runtime->to_host == 1);
  CHECK(runtime->from_host == 2);
  const Tensor back = on1.to(Device::cpu());
  for (std::int64_t i = 0; i < 3; ++i) CHECK(back.get(i) == values[static_cast<std::size_t>(i)]);
}
