#include "tileops/device.hpp"

#include <array>
#include <atomic>
#include <charconv>
#include <memory>
#include <mutex>
#include <string>

#include "tileops/errors.hpp"

namespace tileops {
namespace {

// Interned names live for the whole process; ids index this table. Writers hold the mutex,
// readers of an id they already hold need none: the name was published before the id.
constexpr std::size_t kMaxDeviceTypes = 256;

struct DeviceTypeTable {
  std::mutex mutex;
  std::array<std::unique_ptr<const std::string>, kMaxDeviceTypes> names;
  std::atomic<std::size_t> count{0};

  DeviceTypeTable() {
    add("cpu");   // id 0: DeviceType::cpu()
    add("meta");  // id 1: DeviceType::meta()
  }

  std::uint16_t add(std::string_view name) {
    const std::size_t id = count.load(std::memory_order_relaxed);
    if (id == kMaxDeviceTypes) {
      throw ValueError("cannot intern device type '" + std::string(name) + "': the limit of " +
                       std::to_string(kMaxDeviceTypes) + " device types is reached");
    }
    names[id] = std::make_unique<const std::string>(name);
    count.store(id + 1, std::memory_order_release);
    return static_cast<std::uint16_t>(id);
  }

  std::optional<std::uint16_t> lookup(std::string_view name) const {
    const std::size_t n = count.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < n; ++i) {
      if (*names[i] == name) return static_cast<std::uint16_t>(i);
    }
    return std::nullopt;
  }
};

DeviceTypeTable& table() {
  static DeviceTypeTable t;
  return t;
}

bool valid_type_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

}  // namespace

DeviceType DeviceType::intern(std::string_view name) {
  if (!valid_type_name(name)) {
    throw ValueError("invalid device type name '" + std::string(name) +
                     "': expected a non-empty name of lowercase letters, digits and '_'");
  }
  DeviceTypeTable& t = table();
  if (auto id = t.lookup(name)) return DeviceType(*id);
  std::lock_guard lock(t.mutex);
  if (auto id = t.lookup(name)) return DeviceType(*id);
  return DeviceType(t.add(name));
}

std::optional<DeviceType> DeviceType::find(std::string_view name) {
  if (auto id = table().lookup(name)) return DeviceType(*id);
  return std::nullopt;
}

std::string_view DeviceType::name() const { return *table().names[id_]; }

Device Device::parse(std::string_view text) {
  const auto colon = text.find(':');
  const std::string_view type_name = text.substr(0, colon);
  if (!valid_type_name(type_name)) {
    throw ValueError("invalid device '" + std::string(text) +
                     "': expected TYPE or TYPE:INDEX, e.g. 'cpu' or 'cuda:1'");
  }
  int index = 0;
  if (colon != std::string_view::npos) {
    const std::string_view digits = text.substr(colon + 1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || index < 0) {
      throw ValueError("invalid device '" + std::string(text) +
                       "': the index after ':' must be a non-negative integer");
    }
  }
  return Device(DeviceType::intern(type_name), index);
}

std::string Device::str() const {
  std::string s(type_.name());
  if (!is_cpu() && !is_meta()) s += ":" + std::to_string(index_);
  return s;
}

std::ostream& operator<<(std::ostream& os, const Device& device) { return os << device.str(); }
std::ostream& operator<<(std::ostream& os, DeviceType type) { return os << type.name(); }

}  // namespace tileops
