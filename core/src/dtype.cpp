#include "tileops/dtype.hpp"

#include <array>
#include <string>
#include <utility>

#include "tileops/errors.hpp"

namespace tileops {
namespace {

constexpr std::array kAllDTypes = {DType::bool_,   DType::int8,     DType::uint8,
                                   DType::int32,   DType::int64,    DType::float16,
                                   DType::bfloat16, DType::float32, DType::float64};

constexpr std::array<std::pair<std::string_view, DType>, 6> kAliases = {{
    {"half", DType::float16},
    {"bf16", DType::bfloat16},
    {"float", DType::float32},
    {"double", DType::float64},
    {"int", DType::int32},
    {"long", DType::int64},
}};

}  // namespace

std::span<const DType> all_dtypes() { return kAllDTypes; }

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::bool_: return "bool";
    case DType::int8: return "int8";
    case DType::uint8: return "uint8";
    case DType::int32: return "int32";
    case DType::int64: return "int64";
    case DType::float16: return "float16";
    case DType::bfloat16: return "bfloat16";
    case DType::float32: return "float32";
    case DType::float64: return "float64";
  }
  return "<invalid dtype>";
}

bool try_parse_dtype(std::string_view name, DType& out) {
  for (DType d : kAllDTypes) {
    if (dtype_name(d) == name) {
      out = d;
      return true;
    }
  }
  for (const auto& [alias, d] : kAliases) {
    if (alias == name) {
      out = d;
      return true;
    }
  }
  return false;
}

DType parse_dtype(std::string_view name) {
  DType d;
  if (try_parse_dtype(name, d)) return d;
  std::string known;
  for (DType k : kAllDTypes) {
    if (!known.empty()) known += ", ";
    known += dtype_name(k);
  }
  throw ValueError("unknown dtype '" + std::string(name) + "'; expected one of " + known);
}

std::ostream& operator<<(std::ostream& os, DType dtype) { return os << dtype_name(dtype); }

}  // namespace tileops
