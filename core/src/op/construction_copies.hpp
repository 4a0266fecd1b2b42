// The copies of an instance's construction-time tensors on the devices its calls ran on
// (all but `device: cpu` ones): one parameter set per call device, made on the first call there and kept.
#pragma once

#include <deque>
#include <shared_mutex>
#include <utility>

#include "tileops/device.hpp"
#include "tileops/value.hpp"

namespace tileops {

struct ConstructionCopies {
  std::shared_mutex mutex;
  std::deque<std::pair<Device, ParamMap>> by_device;  // a deque: handed-out references survive growth
};

}  // namespace tileops
