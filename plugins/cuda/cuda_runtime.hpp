// The "cuda" device runtime on the CUDA runtime API: device memory, copies, the current device
// and its stream, and the facts kernel selection reads (compute capability, SM count, shared
// memory per block).
#pragma once

#include <mutex>
#include <vector>

#include "tileops/device_runtime.hpp"

namespace tileops::cuda {

class CudaRuntime final : public DeviceRuntime {
 public:
  DeviceType type() const override;
  // Queries the driver on the first call only, so that loading the plugin does not pay for
  // the driver's initialisation (about 200 ms); without a driver or a GPU it is 0.
  int device_count() const override;
  DeviceFacts facts(int index) const override;
  void* allocate(std::size_t nbytes, int index) override;
  void deallocate(void* ptr, std::size_t nbytes, int index) noexcept override;
  void copy_to_host(void* dst, const void* src, std::size_t nbytes, int index) override;
  void copy_from_host(void* dst, const void* src, std::size_t nbytes, int index) override;
  void copy_on_device(void* dst, const void* src, std::size_t nbytes, int index) override;
  void synchronize(int index) override;
  int current_device() const override;
  void set_current_device(int index) override;
  bool is_accelerator() const override { return true; }

 private:
  void check_index(int index, const char* what) const;
  mutable std::once_flag count_once_;
  mutable int count_ = 0;
  mutable std::once_flag facts_once_;
  mutable std::vector<DeviceFacts> facts_;
};

}  // namespace tileops::cuda
