// For test cases that need a GPU: the cuda runtime when it has a device, else nullptr after
// printing the line "SKIPPED (GPU): <why>", which CTest reports as a skipped test.
#pragma once

#include "tileops/extend/device_runtime.hpp"

namespace tileops::testing {

DeviceRuntime* cuda_or_skip();

}  // namespace tileops::testing
