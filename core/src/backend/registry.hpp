// Internal read access to the backend registry, for the op base and the plugin host.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tileops/extend/backend.hpp"

namespace tileops {

// "plugin '<owner>'", or "the application" for the empty owner: how messages name who registered
// something.
std::string owner_phrase(const std::string& owner);

}  // namespace tileops

namespace tileops::backend {

// A builder and the plugin that registered it ("" for the application).
struct OwnedBuilder {
  std::shared_ptr<const TargetBuilder> builder;  // null when there is none
  std::string owner;
};

// Target `target`'s builder for op `op`, or an empty OwnedBuilder.
OwnedBuilder find_builder(std::string_view op, std::string_view target);

// Who registered the runtime of `type`, as owner_phrase writes it ("the tileops core" for cpu
// and meta; "the application" for a runtime registered outside a Registrar).
std::string runtime_owner(DeviceType type);

// True when some backend registered a detector or a builder under `target`.
// The keys of every kernel type registered so far, for every op.
std::vector<std::string> registered_kernel_keys();

bool target_known(std::string_view target);

struct NamedDetector {
  std::string target;
  std::shared_ptr<const Detector> detect;
  std::string owner;
};
// Every registered detector, sorted by target name.
std::vector<NamedDetector> detectors();

}  // namespace tileops::backend

namespace tileops::collectives {

// Adds `provider` for its device type on behalf of `owner`; throws BackendError naming both
// owners when the type has one. remove_provider undoes it (never throws).
void add_provider(const std::string& owner, std::shared_ptr<CollectiveProvider> provider);
void remove_provider(DeviceType type) noexcept;

}  // namespace tileops::collectives
