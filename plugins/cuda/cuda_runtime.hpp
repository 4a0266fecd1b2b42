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
  // Queries the device count once; a machine without a driver or a GPU has 0 devices.
  CudaRuntime();

  DeviceType type() const override;
  int device_count() const override { return count_; }
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
  int count_ = 0;
  mutable std::once_flag facts_once_;
  mutable std::vector<DeviceFacts> facts_;
};

}  // namespace tileops::cuda
