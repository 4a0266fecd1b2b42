// Manifest parameter types as C++ types, and manifest default values as C++ expressions.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

namespace opgen {

// "int" -> std::int64_t, "float" -> double, "bool", "str" -> std::string, "list[int]" ->
// std::vector<std::int64_t>, "device" -> Device, a choice of dtype names -> DType; "X | None"
// wraps the rest in std::optional, and several kinds make a std::variant in written order.
// Throws std::runtime_error for a type it does not know.
std::string cpp_type(const std::string& manifest_type);

// Whether C++ type `cpp` is passed and returned by value (a number, a bool, a DType).
bool is_scalar(const std::string& cpp);

// The C++ expression of default `node` for a parameter of `manifest_type`.
std::string cpp_default(const std::string& manifest_type, const YAML::Node& node);

}  // namespace opgen
