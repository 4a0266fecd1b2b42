// Devices: an interned device type and an index.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "tileops/export.hpp"

namespace tileops {

// An interned device type name such as "cpu", "meta", "cuda", "hip" or one a plugin adds.
// Comparing two DeviceTypes compares one integer.
class TILEOPS_API DeviceType {
 public:
  // The type named `name`, interning it on first use. Throws ValueError when the name is
  // empty or holds characters other than [a-z0-9_].
  static DeviceType intern(std::string_view name);
  // The type named `name` if it was interned before; nullopt otherwise.
  static std::optional<DeviceType> find(std::string_view name);

  // The two types every process has, interned first (inline: the call path tests for them).
  static DeviceType cpu() { return DeviceType(0); }
  static DeviceType meta() { return DeviceType(1); }

  std::string_view name() const;
  std::uint16_t id() const { return id_; }

  friend bool operator==(DeviceType a, DeviceType b) { return a.id_ == b.id_; }

 private:
  explicit DeviceType(std::uint16_t id) : id_(id) {}
  std::uint16_t id_;
};

// A device: a type and an index within that type (0 for cpu and meta).
class TILEOPS_API Device {
 public:
  Device(DeviceType type, int index = 0) : type_(type), index_(index) {}

  // Parses "cpu", "cuda", "cuda:1", "acme:0". A missing index means 0. Throws ValueError on
  // a malformed string.
  static Device parse(std::string_view text);
  static Device cpu() { return Device(DeviceType::cpu()); }
  static Device meta() { return Device(DeviceType::meta()); }

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool is_cpu() const { return type_ == DeviceType::cpu(); }
  bool is_meta() const { return type_ == DeviceType::meta(); }

  // "cuda:1"; cpu and meta print without an index.
  std::string str() const;

  friend bool operator==(const Device& a, const Device& b) {
    return a.type_ == b.type_ && a.index_ == b.index_;
  }

 private:
  DeviceType type_;
  int index_;
};

TILEOPS_API std::ostream& operator<<(std::ostream& os, const Device& device);
TILEOPS_API std::ostream& operator<<(std::ostream& os, DeviceType type);

}  // namespace tileops

template <>
struct std::hash<tileops::DeviceType> {
  std::size_t operator()(tileops::DeviceType t) const noexcept { return t.id(); }
};

template <>
struct std::hash<tileops::Device> {
  std::size_t operator()(const tileops::Device& d) const noexcept {
    return (static_cast<std::size_t>(d.type().id()) << 32) ^ static_cast<std::size_t>(d.index());
  }
};
