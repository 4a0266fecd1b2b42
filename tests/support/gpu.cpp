#include "support/gpu.hpp"

#include <iostream>

#include "tileops/extend/plugin.hpp"

namespace tileops::testing {

DeviceRuntime* cuda_or_skip() {
  load_backends();
  const auto type = DeviceType::find("cuda");
  DeviceRuntime* rt = type ? find_device_runtime(*type) : nullptr;
  if (rt == nullptr) {
    std::cout << "SKIPPED (GPU): the cuda plugin is not built or not loaded\n";
    return nullptr;
  }
  if (rt->device_count() == 0) {
    std::cout << "SKIPPED (GPU): no CUDA device on this machine\n";
    return nullptr;
  }
  return rt;
}

}  // namespace tileops::testing
