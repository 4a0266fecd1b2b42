// What may key a dispatch cache: immutable values with value equality, a hash and a printed
// form. Call spec fields and build identities must be CacheKeys; a field that is not (a
// Tensor, a pointer, a callable) fails to compile: "cannot key a dispatch cache".
#pragma once

#include <bit>
#include <concepts>
#include <cstdint>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "tileops/device.hpp"
#include "tileops/dtype.hpp"
#include "tileops/shape.hpp"

namespace tileops {

inline std::size_t hash_combine(std::size_t seed, std::size_t h) {
  return seed ^ (h + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

template <class T>
struct CacheKeyTraits;  // specialised below for every admitted type

template <class T>
concept CacheKey = requires(const T& a) {
  { CacheKeyTraits<T>::hash(a) } -> std::convertible_to<std::size_t>;
  { CacheKeyTraits<T>::str(a) } -> std::convertible_to<std::string>;
  { a == a } -> std::convertible_to<bool>;
};

template <class T>
std::size_t cache_key_hash(const T& v) {
  return CacheKeyTraits<T>::hash(v);
}
template <class T>
std::string cache_key_str(const T& v) {
  return CacheKeyTraits<T>::str(v);
}

template <class T>
  requires(std::is_integral_v<T> || std::is_enum_v<T>) && (!std::is_same_v<T, DType>)
struct CacheKeyTraits<T> {
  static std::size_t hash(T v) { return std::hash<T>{}(v); }
  static std::string str(T v) {
    if constexpr (std::is_same_v<T, bool>) {
      return v ? "true" : "false";
    } else if constexpr (std::is_enum_v<T>) {
      return std::to_string(static_cast<std::underlying_type_t<T>>(v));
    } else {
      return std::to_string(v);
    }
  }
};

template <std::floating_point T>
struct CacheKeyTraits<T> {
  // +0.0 and -0.0 compare equal, so they must hash alike.
  static std::size_t hash(T v) { return std::hash<T>{}(v == T(0) ? T(0) : v); }
  static std::string str(T v) {
    std::ostringstream os;
    os << v;
    return os.str();
  }
};

template <>
struct CacheKeyTraits<DType> {
  static std::size_t hash(DType v) { return static_cast<std::size_t>(v) * 0x100000001b3ULL; }
  static std::string str(DType v) { return std::string(dtype_name(v)); }
};

template <>
struct CacheKeyTraits<Device> {
  static std::size_t hash(const Device& v) { return std::hash<Device>{}(v); }
  static std::string str(const Device& v) { return v.str(); }
};

template <>
struct CacheKeyTraits<std::string> {
  static std::size_t hash(const std::string& v) { return std::hash<std::string>{}(v); }
  static std::string str(const std::string& v) { return "'" + v + "'"; }
};

template <CacheKey T>
struct CacheKeyTraits<std::optional<T>> {
  static std::size_t hash(const std::optional<T>& v) { return v ? hash_combine(1, cache_key_hash(*v)) : 0; }
  static std::string str(const std::optional<T>& v) { return v ? cache_key_str(*v) : "None"; }
};

template <class Seq>
struct SequenceKeyTraits {
  static std::size_t hash(const Seq& v) {
    std::size_t h = v.size();
    for (const auto& x : v) h = hash_combine(h, cache_key_hash(x));
    return h;
  }
  static std::string str(const Seq& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + cache_key_str(v[i]);
    return s + "]";
  }
};

template <CacheKey T>
struct CacheKeyTraits<std::vector<T>> : SequenceKeyTraits<std::vector<T>> {};

template <>
struct CacheKeyTraits<Shape> : SequenceKeyTraits<Shape> {};

template <CacheKey... T>
struct CacheKeyTraits<std::tuple<T...>> {
  static std::size_t hash(const std::tuple<T...>& v) {
    return std::apply([](const auto&... x) {
      std::size_t h = sizeof...(T);
      ((h = hash_combine(h, cache_key_hash(x))), ...);
      return h;
    }, v);
  }
  static std::string str(const std::tuple<T...>& v) {
    return std::apply([](const auto&... x) {
      std::string s = "(";
      std::size_t i = 0;
      ((s += (i++ ? ", " : "") + cache_key_str(x)), ...);
      return s + ")";
    }, v);
  }
};

}  // namespace tileops
