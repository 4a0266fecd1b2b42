#include "backend/registry.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>

#include "tileops/config.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/collectives.hpp"
#include "tileops/extend/device_runtime.hpp"
#include "tileops/logging.hpp"

namespace tileops {
namespace {

struct BuilderSlot {
  std::shared_ptr<const TargetBuilder> builder;
  std::string owner;
};

struct DetectorSlot {
  std::shared_ptr<const Detector> detect;
  std::string owner;
};

// The process-wide registry. Writes (registration, rollback) take the mutex exclusively;
// reads (op construction, target selection) share it. Nothing on the cached call path reads it.
struct Registry {
  std::shared_mutex mutex;
  std::map<std::string, std::vector<RegisteredKernelType>, std::less<>> kernel_types;  // by op
  std::map<std::string, std::map<std::string, BuilderSlot, std::less<>>, std::less<>> builders;  // op → target
  std::map<std::string, DetectorSlot, std::less<>> detectors;                           // by target
  std::map<std::string, std::string, std::less<>> runtime_owners;  // device type → who registered its runtime
  Target default_target;
  bool default_target_set = false;
};

Registry& registry() {
  static Registry r;
  return r;
}

void add_kernel_type(const std::string& owner, const std::string& op, const std::string& key, KernelType type) {
  if (op.empty() || key.empty()) throw BackendError("register_kernel_type: the op name and the key must be non-empty");
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  auto& list = r.kernel_types[op];
  for (const auto& existing : list) {
    if (existing.key == key) {
      throw BackendError("register_kernel_type: " + owner_phrase(owner) + " cannot register key '" + key + "' for " + op +
                         ": " + owner_phrase(existing.owner) + " registered that key first (keys are unique per op; "
                         "choose another key, or disable one of the two)");
    }
  }
  list.push_back({op, key, owner, std::make_shared<const KernelType>(std::move(type))});
}

void remove_kernel_type(const std::string& op, const std::string& key) {
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  auto it = r.kernel_types.find(op);
  if (it == r.kernel_types.end()) return;
  std::erase_if(it->second, [&](const RegisteredKernelType& k) { return k.key == key; });
}

void add_builder(const std::string& owner, const std::string& op, const std::string& target, TargetBuilder builder) {
  if (is_in_tree_target(target)) {
    throw BackendError("register_kernel_builder: '" + target + "' names the in-tree kernels and cannot be a target");
  }
  if (op.empty() || target.empty() || !builder) {
    throw BackendError("register_kernel_builder: the op name, the target name and the builder must be given");
  }
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  auto [it, inserted] = r.builders[op].try_emplace(target);
  if (!inserted) {
    throw BackendError("register_kernel_builder: " + owner_phrase(owner) + " cannot register a builder of target '" +
                       target + "' for " + op + ": " + owner_phrase(it->second.owner) +
                       " registered one first (one builder per op and target)");
  }
  it->second = {std::make_shared<const TargetBuilder>(std::move(builder)), owner};
}

void remove_builder(const std::string& op, const std::string& target) {
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  auto it = r.builders.find(op);
  if (it != r.builders.end()) it->second.erase(target);
}

void add_detector(const std::string& owner, const std::string& target, Detector detect) {
  if (is_in_tree_target(target)) {
    throw BackendError("register_detector: '" + target + "' names the in-tree kernels and cannot be a target");
  }
  if (target.empty() || !detect) throw BackendError("register_detector: the target name and the detector must be given");
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  auto [it, inserted] = r.detectors.try_emplace(target);
  if (!inserted) {
    throw BackendError("register_detector: " + owner_phrase(owner) + " cannot register a detector for target '" +
                       target + "': " + owner_phrase(it->second.owner) + " registered one first (one detector per target)");
  }
  it->second = {std::make_shared<const Detector>(std::move(detect)), owner};
}

void remove_detector(const std::string& target) {
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  r.detectors.erase(target);
}

void add_runtime(const std::string& owner, std::shared_ptr<DeviceRuntime> runtime) {
  const std::string type(runtime->type().name());
  if (find_device_runtime(runtime->type()) != nullptr) {
    throw BackendError("register_device_runtime: " + owner_phrase(owner) + " cannot register a runtime for device type '" +
                       type + "': " + backend::runtime_owner(runtime->type()) +
                       " registered one first (one runtime per device type)");
  }
  Registry& r = registry();
  {
    std::unique_lock lock(r.mutex);
    r.runtime_owners[type] = owner;
  }
  try {
    tileops::register_device_runtime(std::move(runtime));
  } catch (...) {
    std::unique_lock lock(r.mutex);
    r.runtime_owners.erase(type);
    throw;
  }
}

void remove_runtime(DeviceType type) {
  unregister_device_runtime(type);
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  r.runtime_owners.erase(std::string(type.name()));
}

}  // namespace

std::string owner_phrase(const std::string& owner) {
  return owner.empty() ? "the application" : "plugin '" + owner + "'";
}

Registrar::Registrar(std::string owner) : owner_(std::move(owner)) {}

Registrar::~Registrar() {
  if (!committed_) rollback();
}

void Registrar::record(Registration registration, std::function<void()> undo, const std::function<void()>& add) {
  // Everything that may throw happens before `add`: once it succeeded, recording it cannot fail.
  registrations_.reserve(registrations_.size() + 1);
  undo_.reserve(undo_.size() + 1);
  add();
  undo_.push_back(std::move(undo));
  registrations_.push_back(std::move(registration));
}

void Registrar::register_kernel_type(const std::string& op, const std::string& key, KernelType type) {
  record({Registration::Kind::kernel_type, op, key}, [op, key] { remove_kernel_type(op, key); },
         [&] { add_kernel_type(owner_, op, key, std::move(type)); });
}

void Registrar::register_kernel_builder(const std::string& op, const std::string& target, TargetBuilder builder) {
  record({Registration::Kind::kernel_builder, op, target}, [op, target] { remove_builder(op, target); },
         [&] { add_builder(owner_, op, target, std::move(builder)); });
}

void Registrar::register_detector(const std::string& target, Detector detect) {
  record({Registration::Kind::detector, "", target}, [target] { remove_detector(target); },
         [&] { add_detector(owner_, target, std::move(detect)); });
}

void Registrar::register_device_runtime(std::shared_ptr<DeviceRuntime> runtime) {
  if (!runtime) throw BackendError("register_device_runtime: the runtime is null");
  const DeviceType type = runtime->type();
  record({Registration::Kind::device_runtime, "", std::string(type.name())}, [type] { remove_runtime(type); },
         [&] { add_runtime(owner_, std::move(runtime)); });
}

void Registrar::register_collective_provider(std::shared_ptr<CollectiveProvider> provider) {
  if (!provider) throw BackendError("register_collective_provider: the provider is null");
  const DeviceType type = provider->device_type();
  record({Registration::Kind::collective_provider, "", std::string(type.name())},
         [type] { collectives::remove_provider(type); },
         [&] { collectives::add_provider(owner_, std::move(provider)); });
}

void Registrar::rollback() noexcept {
  while (!undo_.empty()) {
    undo_.back()();
    undo_.pop_back();
  }
  registrations_.clear();
}

void register_kernel_type(const std::string& op, const std::string& key, KernelType type) {
  add_kernel_type("", op, key, std::move(type));
}

void register_kernel_builder(const std::string& op, const std::string& target, TargetBuilder builder) {
  add_builder("", op, target, std::move(builder));
}

void register_detector(const std::string& target, Detector detect) { add_detector("", target, std::move(detect)); }

void set_default_target(Target target) {
  if (target && target->empty()) throw ValueError("set_default_target: the target name is empty");
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  r.default_target_set = target.has_value();
  r.default_target = std::move(target);
}

TargetChoice default_target_choice() {
  Registry& r = registry();
  {
    std::shared_lock lock(r.mutex);
    if (r.default_target_set) return {r.default_target, "set_default_target"};
  }
  Config c = config();
  if (!c.default_target) return {};
  return {std::move(c.default_target), c.default_target_origin.empty() ? "the config" : c.default_target_origin};
}

Target default_target() { return default_target_choice().target; }

std::vector<std::string> registered_targets(std::string_view op) {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  std::set<std::string> names;
  for (const auto& [op_name, targets] : r.builders) {
    if (!op.empty() && op_name != op) continue;
    for (const auto& [target, slot] : targets) names.insert(target);
  }
  if (op.empty()) {
    for (const auto& [target, slot] : r.detectors) names.insert(target);
  }
  return {names.begin(), names.end()};
}

std::vector<std::string> target_ops(std::string_view target) {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  std::vector<std::string> ops;
  for (const auto& [op, targets] : r.builders) {
    if (targets.find(target) != targets.end()) ops.push_back(op);
  }
  return ops;
}

std::vector<RegisteredKernelType> registered_kernel_types(std::string_view op) {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  auto it = r.kernel_types.find(op);
  return it == r.kernel_types.end() ? std::vector<RegisteredKernelType>{} : it->second;
}

namespace backend {

std::vector<std::string> registered_kernel_keys() {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  std::vector<std::string> keys;
  for (const auto& [op, types] : r.kernel_types) {
    for (const RegisteredKernelType& t : types) keys.push_back(t.key);
  }
  return keys;
}

OwnedBuilder find_builder(std::string_view op, std::string_view target) {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  auto it = r.builders.find(op);
  if (it == r.builders.end()) return {};
  auto slot = it->second.find(target);
  if (slot == it->second.end()) return {};
  return {slot->second.builder, slot->second.owner};
}

std::string runtime_owner(DeviceType type) {
  if (type == DeviceType::cpu() || type == DeviceType::meta()) return "the tileops core";
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  auto it = r.runtime_owners.find(type.name());
  return owner_phrase(it == r.runtime_owners.end() ? std::string() : it->second);
}

bool target_known(std::string_view target) {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  if (r.detectors.find(target) != r.detectors.end()) return true;
  for (const auto& [op, targets] : r.builders) {
    if (targets.find(target) != targets.end()) return true;
  }
  return false;
}

std::vector<NamedDetector> detectors() {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  std::vector<NamedDetector> out;
  for (const auto& [target, slot] : r.detectors) out.push_back({target, slot.detect, slot.owner});
  return out;
}

}  // namespace backend
}  // namespace tileops
