// Element types of tensors.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <span>
#include <string_view>

#include "tileops/export.hpp"

namespace tileops {

enum class DType : std::uint8_t {
  bool_,
  int8,
  uint8,
  int32,
  int64,
  float16,
  bfloat16,
  float32,
  float64,
};

// Every dtype, in declaration order.
TILEOPS_API std::span<const DType> all_dtypes();

// The canonical name ("float16", "bool", ...).
TILEOPS_API std::string_view dtype_name(DType dtype);

// Parses a canonical name; also accepts the aliases "half", "bf16", "float", "double", "int",
// "long". Throws ValueError naming the accepted names when `name` is none of them.
TILEOPS_API DType parse_dtype(std::string_view name);

// True and sets `out` when `name` is a dtype name or alias; false otherwise.
TILEOPS_API bool try_parse_dtype(std::string_view name, DType& out);

constexpr int dtype_bits(DType dtype) {
  switch (dtype) {
    case DType::bool_:
    case DType::int8:
    case DType::uint8:
      return 8;
    case DType::float16:
    case DType::bfloat16:
      return 16;
    case DType::int32:
    case DType::float32:
      return 32;
    case DType::int64:
    case DType::float64:
      return 64;
  }
  return 0;
}

constexpr std::size_t dtype_size(DType dtype) { return static_cast<std::size_t>(dtype_bits(dtype) / 8); }

constexpr bool is_floating(DType dtype) {
  return dtype == DType::float16 || dtype == DType::bfloat16 || dtype == DType::float32 ||
         dtype == DType::float64;
}

constexpr bool is_integral(DType dtype) {
  return dtype == DType::int8 || dtype == DType::uint8 || dtype == DType::int32 ||
         dtype == DType::int64;
}

// The machine epsilon of a floating dtype (the gap between 1 and the next value), float32's for
// any other: what the RMS norms use when eps is None.
constexpr double dtype_epsilon(DType dtype) {
  switch (dtype) {
    case DType::float16: return 0.0009765625;  // 2^-10
    case DType::bfloat16: return 0.0078125;    // 2^-7
    case DType::float64: return std::numeric_limits<double>::epsilon();
    default: return std::numeric_limits<float>::epsilon();
  }
}

// "bool", "int" or "float": the category the manifest's `category()` primitive returns.
constexpr std::string_view dtype_category(DType dtype) {
  return dtype == DType::bool_ ? "bool" : is_integral(dtype) ? "int" : "float";
}

TILEOPS_API std::ostream& operator<<(std::ostream& os, DType dtype);

}  // namespace tileops

template <>
struct std::hash<tileops::DType> {
  std::size_t operator()(tileops::DType d) const noexcept { return static_cast<std::size_t>(d); }
};
