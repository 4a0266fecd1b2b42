// The two runtimes the core always has: cpu (host memory) and meta (shapes only, no data).
#pragma once

#include <memory>

#include "tileops/extend/device_runtime.hpp"

namespace tileops {

std::shared_ptr<DeviceRuntime> make_cpu_runtime();
std::shared_ptr<DeviceRuntime> make_meta_runtime();

}  // namespace tileops
