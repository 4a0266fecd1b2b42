#include <doctest/doctest.h>

#include "tileops/arch_name.hpp"
#include "tileops/device.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/device_runtime.hpp"

using namespace tileops;

TEST_CASE("device types are interned: the same name gives the same type") {
  const DeviceType a = DeviceType::intern("acme_test");
  const DeviceType b = DeviceType::intern("acme_test");
  CHECK(a == b);
  CHECK(a.name() == "acme_test");
  CHECK_FALSE(a == DeviceType::cpu());
  CHECK(DeviceType::find("acme_test").has_value());
  CHECK_FALSE(DeviceType::find("never_interned_type").has_value());
}

TEST_CASE("architecture numbers are named as each vendor names them, in decimal for other device types") {
  CHECK(arch_name("cuda", 90) == "sm_90");
  CHECK(arch_name("cuda", 89) == "sm_89");
  CHECK(arch_name("hip", 0x90a) == "gfx90a");
  CHECK(arch_name("hip", 0x1030) == "gfx1030");
  CHECK(arch_name("acme_test", 90) == "90");
  CHECK(arch_name("hip", -1) == "-1");
}

TEST_CASE("cpu and meta are built in") {
  CHECK(DeviceType::cpu().name() == "cpu");
  CHECK(DeviceType::meta().name() == "meta");
  CHECK(Device::cpu().is_cpu());
  CHECK(Device::meta().is_meta());
}

TEST_CASE("device strings parse with and without an index") {
  CHECK(Device::parse("cpu") == Device::cpu());
  const Device d = Device::parse("cuda:1");
  CHECK(d.type().name() == "cuda");
  CHECK(d.index() == 1);
  CHECK(d.str() == "cuda:1");
  CHECK(Device::parse("cuda").index() == 0);
  CHECK(Device::cpu().str() == "cpu");
}

TEST_CASE("malformed device strings are ValueErrors naming the expected form") {
  CHECK_THROWS_WITH_AS(Device::parse("cuda:"), doctest::Contains("non-negative integer"), ValueError);
  CHECK_THROWS_WITH_AS(Device::parse("cuda:x"), doctest::Contains("non-negative integer"), ValueError);
  CHECK_THROWS_WITH_AS(Device::parse("cuda:-1"), doctest::Contains("non-negative integer"), ValueError);
  CHECK_THROWS_WITH_AS(Device::parse("CUDA"), doctest::Contains("TYPE:INDEX"), ValueError);
  CHECK_THROWS_WITH_AS(Device::parse(""), doctest::Contains("TYPE:INDEX"), ValueError);
  CHECK_THROWS_AS(DeviceType::intern("Bad Name"), ValueError);
}

TEST_CASE("the core registers the cpu and meta runtimes") {
  DeviceRuntime& cpu = device_runtime(DeviceType::cpu());
  CHECK(cpu.device_count() == 1);
  CHECK(cpu.host_accessible());
  CHECK_FALSE(cpu.is_accelerator());
  CHECK(cpu.facts(0).sm_count >= 1);
  CHECK_FALSE(cpu.facts(0).name.empty());
  CHECK(device_runtime(DeviceType::meta()).device_count() == 1);
  const auto all = device_runtimes();
  REQUIRE(all.size() >= 2);
  CHECK(all[0]->type() == DeviceType::cpu());
  CHECK(all[1]->type() == DeviceType::meta());
}

TEST_CASE("a device type without a runtime is an OpNotAvailableError naming the registered types") {
  const DeviceType t = DeviceType::intern("no_runtime_here");
  CHECK(find_device_runtime(t) == nullptr);
  CHECK_THROWS_WITH_AS(device_runtime(t), doctest::Contains("'no_runtime_here'"), OpNotAvailableError);
  CHECK_THROWS_WITH_AS(device_runtime(t), doctest::Contains("registered: cpu, meta"), OpNotAvailableError);
}

TEST_CASE("registering a second runtime for a device type is a BackendError") {
  struct Fake final : DeviceRuntime {
    DeviceType type() const override { return DeviceType::cpu(); }
    int device_count() const override { return 1; }
    DeviceFacts facts(int) const override { return {}; }
    void* allocate(std::size_t, int) override { return nullptr; }
    void deallocate(void*, std::size_t, int) noexcept override {}
    void copy_to_host(void*, const void*, std::size_t, int) override {}
    void copy_from_host(void*, const void*, std::size_t, int) override {}
    void copy_on_device(void*, const void*, std::size_t, int) override {}
  };
  CHECK_THROWS_WITH_AS(register_device_runtime(std::make_shared<Fake>()), doctest::Contains("already registered"),
                       BackendError);
}

TEST_CASE("without an accelerator runtime the process has no accelerator") {
  CHECK(process_accelerator() == nullptr);
  CHECK_FALSE(accelerator_current_device().has_value());
}
