#include "backend/registry.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>

#include "tileops/config.hpp"
#include "tileops/device_runtime.hpp"
#include "tileops/errors.hpp"
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
  Target default_target;
  bool default_target_set = false;
};

Registry& registry() {
  static Registry r;
  return r;
}

std::string owned_by(const std::string& owner) { return owner.empty() ? "the application" : "plugin '" + owner + "'"; }

void add_kernel_type(const std::string& owner, const std::string& op, const std::string& key, KernelType type) {
  if (op.empty() || key.empty()) throw BackendError("register_kernel_type: the op name and the key must be non-empty");
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  auto& list = r.kernel_types[op];
  for (const auto& existing : list) {
    if (existing.key == key) {
      throw BackendError("register_kernel_type: " + op + " already has a kernel type under key '" + key +
                         "' (registered by " + owned_by(existing.owner) + ")");
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
    throw BackendError("register_kernel_builder: target '" + target + "' already has a builder for " + op +
                       " (registered by " + owned_by(it->second.owner) + ")");
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
    throw BackendError("register_detector: target '" + target + "' already has a detector (registered by " +
                       owned_by(it->second.owner) + ")");
  }
  it->second = {std::make_shared<const Detector>(std::move(detect)), owner};
}

void remove_detector(const std::string& target) {
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  r.detectors.erase(target);
}

}  // namespace

Registrar::Registrar(std::string owner) : owner_(std::move(owner)) {}

Registrar::~Registrar() {
  if (!committed_) rollback();
}

void Registrar::register_kernel_type(const std::string& op, const std::string& key, KernelType type) {
  add_kernel_type(owner_, op, key, std::move(type));
  undo_.emplace_back([op, key] { remove_kernel_type(op, key); });
}

void Registrar::register_kernel_builder(const std::string& op, const std::string& target, TargetBuilder builder) {
  add_builder(owner_, op, target, std::move(builder));
  undo_.emplace_back([op, target] { remove_builder(op, target); });
}

void Registrar::register_detector(const std::string& target, Detector detect) {
  add_detector(owner_, target, std::move(detect));
  undo_.emplace_back([target] { remove_detector(target); });
}

void Registrar::register_device_runtime(std::shared_ptr<DeviceRuntime> runtime) {
  if (!runtime) throw BackendError("register_device_runtime: the runtime is null");
  const DeviceType type = runtime->type();
  tileops::register_device_runtime(std::move(runtime));
  undo_.emplace_back([type] { unregister_device_runtime(type); });
}

void Registrar::rollback() noexcept {
  while (!undo_.empty()) {
    undo_.back()();
    undo_.pop_back();
  }
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
  r.default_target = std::move(target);
  r.default_target_set = true;
}

Target default_target() {
  Registry& r = registry();
  {
    std::shared_lock lock(r.mutex);
    if (r.default_target_set) return r.default_target;
  }
  return config().default_target;
}

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

std::shared_ptr<const TargetBuilder> find_builder(std::string_view op, std::string_view target) {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  auto it = r.builders.find(op);
  if (it == r.builders.end()) return nullptr;
  auto slot = it->second.find(target);
  return slot == it->second.end() ? nullptr : slot->second.builder;
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
  for (const auto& [target, slot] : r.detectors) out.push_back({target, slot.detect});
  return out;
}

}  // namespace backend
}  // namespace tileops
