// Conversions between a manifest parameter's Value and the C++ type the generated op surface
// gives it (tools/opgen): std::int64_t, double, bool, std::string, std::vector<std::int64_t>,
// DType, Device, Tensor; std::optional<X> for `X | None`, std::variant for a union of kinds.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "tileops/errors.hpp"
#include "tileops/value.hpp"

namespace tileops::op_params {

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
template <class T>
struct is_variant : std::false_type {};
template <class... T>
struct is_variant<std::variant<T...>> : std::true_type {};

[[noreturn]] inline void wrong_kind(std::string_view name, const Value& v, std::string_view want) {
  throw TypeError("parameter '" + std::string(name) + "' holds " + std::string(value_kind(v)) + " " + value_str(v) +
                  ", not " + std::string(want));
}

// `v` as T. An int converts to double; a variant takes the first alternative `v` holds.
// Throws TypeError naming `name` when `v` holds another kind.
template <class T>
T value_as(const Value& v, std::string_view name) {
  if constexpr (is_optional<T>::value) {
    if (std::holds_alternative<std::monostate>(v)) return std::nullopt;
    return value_as<typename T::value_type>(v, name);
  } else if constexpr (is_variant<T>::value) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      std::optional<T> out;
      ((!out && std::holds_alternative<std::variant_alternative_t<I, T>>(v)
            ? void(out.emplace(std::in_place_index<I>, std::get<std::variant_alternative_t<I, T>>(v)))
            : void()),
       ...);
      if (!out) wrong_kind(name, v, "one of the kinds its type allows");
      return *out;
    }(std::make_index_sequence<std::variant_size_v<T>>{});
  } else {
    if (const T* typed = std::get_if<T>(&v)) return *typed;
    if constexpr (std::is_same_v<T, double>) {
      if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
    }
    if constexpr (std::is_same_v<T, Tensor>) {
      if (std::holds_alternative<std::monostate>(v)) return Tensor();
    }
    wrong_kind(name, v, "the kind its type declares");
  }
}

// Parameter `name` of `params` as T. Throws ValueError when `params` lacks it, TypeError when
// it holds another kind.
template <class T>
T from_value(const ParamMap& params, std::string_view name) {
  return value_as<T>(params.at(name), name);
}

// `x` as a Value: None for an empty optional or an undefined Tensor, the held alternative of a
// variant.
template <class T>
Value to_value(const T& x) {
  if constexpr (is_optional<T>::value) {
    return x ? to_value(*x) : Value();
  } else if constexpr (is_variant<T>::value) {
    return std::visit([](const auto& a) { return Value(a); }, x);
  } else if constexpr (std::is_same_v<T, Tensor>) {
    return x.defined() ? Value(x) : Value();
  } else {
    return Value(x);
  }
}

}  // namespace tileops::op_params
