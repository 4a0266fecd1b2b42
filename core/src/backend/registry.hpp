// Internal read access to the backend registry, for the op base and the plugin host.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tileops/backend.hpp"

namespace tileops::backend {

// Target `target`'s builder for op `op`, or nullptr.
std::shared_ptr<const TargetBuilder> find_builder(std::string_view op, std::string_view target);

// True when some backend registered a detector or a builder under `target`.
bool target_known(std::string_view target);

struct NamedDetector {
  std::string target;
  std::shared_ptr<const Detector> detect;
};
// Every registered detector, sorted by target name.
std::vector<NamedDetector> detectors();

}  // namespace tileops::backend
