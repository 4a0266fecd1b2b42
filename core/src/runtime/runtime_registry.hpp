// Internal access to the device runtime registry.
#pragma once

#include <memory>

#include "tileops/extend/device_runtime.hpp"

namespace tileops {

// The runtime of `type`, shared so that storage allocated through it outlives a plugin's
// unregistration. Throws like device_runtime() when none is registered.
std::shared_ptr<DeviceRuntime> device_runtime_shared(DeviceType type);

}  // namespace tileops
