// The "acme" device type: a made-up accelerator whose memory is host memory, so that the
// example runs anywhere. A real vendor runtime would call its driver here.
#pragma once

#include "tileops/extend/device_runtime.hpp"

namespace acme {

class AcmeRuntime final : public tileops::DeviceRuntime {
 public:
  tileops::DeviceType type() const override;
  int device_count() const override { return 2; }
  tileops::DeviceFacts facts(int index) const override;
  void* allocate(std::size_t nbytes, int index) override;
  void deallocate(void* ptr, std::size_t nbytes, int index) noexcept override;
  void copy_to_host(void* dst, const void* src, std::size_t nbytes, int index) override;
  void copy_from_host(void* dst, const void* src, std::size_t nbytes, int index) override;
  void copy_on_device(void* dst, const void* src, std::size_t nbytes, int index) override;
  bool host_accessible() const override { return true; }
};

}  // namespace acme
