// Reads an op's `interfaces:` section:
//
//   interfaces:
//     rms_norm:                                 # the name forward passes to kernel_for
//       doc: y = x / sqrt(mean(x^2) + eps) ...  # the contract of every argument
//       call: {n: int64, eps: float, dtype: DType}
//       args: {x: Tensor, weight: Tensor}
//       returns: Tensor                         # void, Tensor, or a list of tensor names
//       reference: {key: rms_norm_reference, identity: [dtype]}   # optional
//
// A field is `name: type` or `name: {type: T, default: V, doc: D}`; an enum field is
// `name: {enum: Name, values: [a, b], default: a}`.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <tuple>

#include "op_model.hpp"

namespace opgen {
namespace {

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string require_identifier(const std::string& s, const std::string& where) {
  if (!is_identifier(s)) throw std::runtime_error(where + ": '" + s + "' is not a C++ identifier");
  return s;
}


std::string scalar(const YAML::Node& node, const std::string& where) {
  if (!node || !node.IsScalar()) throw std::runtime_error(where + ": expected a scalar");
  return node.Scalar();
}

// The C++ type and zero value of a manifest field type.
std::pair<std::string, std::string> field_type(const std::string& type, bool argument, const std::string& where) {
  if (type == "int64") return {"std::int64_t", "0"};
  if (type == "float") return {"double", "0.0"};
  if (type == "bool") return {"bool", "false"};
  if (type == "DType") return {"DType", "DType::float32"};
  if (type == "Tensor" && argument) return {"Tensor", ""};
  throw std::runtime_error(where + ": type '" + type + "' is not one of int64, float, bool, DType" +
                           (argument ? ", Tensor" : "") + " or an enum");
}

std::string default_expr(const FieldModel& f, const YAML::Node& value, const std::string& where) {
  const std::string v = scalar(value, where + ".default");
  if (!f.enum_values.empty()) {
    if (std::find(f.enum_values.begin(), f.enum_values.end(), v) == f.enum_values.end()) {
      throw std::runtime_error(where + ".default: '" + v + "' is not one of the enum's values");
    }
    return f.cpp_type + "::" + v;
  }
  if (f.cpp_type == "DType") {
    static const std::set<std::string> dtypes{"bool", "int8", "uint8", "int32", "int64",
                                              "float16", "bfloat16", "float32", "float64"};
    if (!dtypes.contains(v)) throw std::runtime_error(where + ".default: '" + v + "' is not a dtype name");
    return v == "bool" ? "DType::bool_" : "DType::" + v;
  }
  if (f.cpp_type == "bool") {
    if (v != "true" && v != "false") throw std::runtime_error(where + ".default: expected true or false, not '" + v + "'");
    return v;
  }
  const char* first = v.data();
  const char* last = v.data() + v.size();
  if (f.cpp_type == "double") {
    double d = 0;
    const auto [end, error] = std::from_chars(first, last, d);
    if (error != std::errc() || end != last || !std::isfinite(d)) {
      throw std::runtime_error(where + ".default: '" + v + "' is not a finite decimal number");
    }
    // The shortest text that reads back as d, as a double literal.
    char text[32];
    const std::string literal(text, std::to_chars(text, text + sizeof text, d).ptr);
    return literal.find_first_of(".e") == std::string::npos ? literal + ".0" : literal;
  }
  std::int64_t n = 0;
  const auto [end, error] = std::from_chars(first, last, n);
  if (error != std::errc() || end != last) {
    throw std::runtime_error(where + ".default: '" + v + "' is not an int64 number");
  }
  // The smallest int64 has no literal of its own: its digits overflow before the minus applies.
  return n == INT64_MIN ? "INT64_MIN" : std::to_string(n);
}

FieldModel field(const std::string& name, const YAML::Node& node, bool argument, const std::string& where) {
  FieldModel f;
  f.name = require_identifier(name, where);
  if (node.IsScalar()) {
    std::tie(f.cpp_type, f.default_expr) = field_type(node.Scalar(), argument, where);
    return f;
  }
  if (!node.IsMap()) throw std::runtime_error(where + ": expected a type or a map with `type` or `enum`");
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (key != "type" && key != "enum" && key != "values" && key != "default" && key != "doc") {
      throw std::runtime_error(where + ": unknown key '" + key + "'; expected type, enum, values, default or doc");
    }
  }
  if (node["doc"]) f.doc = scalar(node["doc"], where + ".doc");
  if (node["enum"]) {
    if (argument) throw std::runtime_error(where + ": an enum is a call spec field, not an argument");
    f.cpp_type = require_identifier(scalar(node["enum"], where + ".enum"), where + ".enum");
    const YAML::Node values = node["values"];
    if (!values || !values.IsSequence() || values.size() == 0) {
      throw std::runtime_error(where + ".values: an enum needs a non-empty list of values");
    }
    std::set<std::string> seen;
    for (const auto& v : values) {
      const std::string value = require_identifier(scalar(v, where + ".values"), where + ".values");
      if (!seen.insert(value).second) throw std::runtime_error(where + ".values: '" + value + "' is listed twice");
      f.enum_values.push_back(value);
    }
    f.default_expr = f.cpp_type + "::" + f.enum_values.front();
  } else {
    std::tie(f.cpp_type, f.default_expr) = field_type(scalar(node["type"], where + ".type"), argument, where);
  }
  if (node["default"]) {
    if (argument) throw std::runtime_error(where + ": an argument has no default");
    f.default_expr = default_expr(f, node["default"], where);
  }
  return f;
}

std::vector<FieldModel> fields(const YAML::Node& node, bool argument, const std::string& where) {
  std::vector<FieldModel> out;
  if (!node || node.IsNull()) return out;
  if (!node.IsMap()) throw std::runtime_error(where + ": expected a map of name: type");
  std::set<std::string> seen;
  for (const auto& kv : node) {
    const std::string name = kv.first.as<std::string>();
    if (!seen.insert(name).second) throw std::runtime_error(where + "." + name + ": defined twice");
    out.push_back(field(name, kv.second, argument, where + "." + name));
  }
  return out;
}

InterfaceModel interface(const std::string& name, const YAML::Node& node, const std::string& where) {
  if (!node.IsMap()) throw std::runtime_error(where + ": expected a map");
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (key != "doc" && key != "call" && key != "args" && key != "returns" && key != "reference") {
      throw std::runtime_error(where + ": unknown key '" + key + "'; expected doc, call, args, returns or reference");
    }
  }
  InterfaceModel i;
  i.name = require_identifier(name, where);
  i.type_name = pascal_case(i.name);
  i.doc = scalar(node["doc"], where + ".doc");
  i.call = fields(node["call"], false, where + ".call");
  i.args = fields(node["args"], true, where + ".args");
  for (const FieldModel& f : i.call) {
    if (f.name == "device" || f.name == "fields") throw std::runtime_error(where + ".call." + f.name + ": the name is CallSpec's own");
  }
  const YAML::Node returns = node["returns"];
  if (returns && returns.IsSequence()) {
    if (returns.size() < 2) throw std::runtime_error(where + ".returns: a list names two or more tensors");
    i.returns = "Result";
    for (const auto& r : returns) i.results.push_back(require_identifier(scalar(r, where + ".returns"), where + ".returns"));
  } else {
    i.returns = scalar(returns, where + ".returns");
    if (i.returns != "void" && i.returns != "Tensor") {
      throw std::runtime_error(where + ".returns: expected void, Tensor or a list of tensor names, not '" + i.returns + "'");
    }
  }
  i.reference_key = i.name + "_reference";
  if (const YAML::Node ref = node["reference"]) {
    if (!ref.IsMap()) throw std::runtime_error(where + ".reference: expected a map with key and/or identity");
    if (ref["key"]) i.reference_key = scalar(ref["key"], where + ".reference.key");
    for (const auto& id : ref["identity"]) {
      const std::string f = scalar(id, where + ".reference.identity");
      if (std::none_of(i.call.begin(), i.call.end(), [&](const FieldModel& c) { return c.name == f; })) {
        throw std::runtime_error(where + ".reference.identity: '" + f + "' is not a call field");
      }
      i.identity.push_back(f);
    }
  }
  return i;
}

}  // namespace

// "rms_norm" -> "RmsNorm": a class name that cannot hide the snake_case functions kernel bodies
// call (a kernel derives the interface, so its name is in scope there).
std::string pascal_case(const std::string& name) {
  std::string out;
  bool upper = true;
  for (char c : name) {
    if (c == '_') {
      upper = true;
    } else {
      out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      upper = false;
    }
  }
  return out;
}

std::vector<const FieldModel*> InterfaceModel::enums() const {
  std::vector<const FieldModel*> out;
  for (const FieldModel& f : call) {
    if (!f.enum_values.empty()) out.push_back(&f);
  }
  return out;
}

std::vector<FieldModel> read_derived(const YAML::Node& node) {
  std::vector<FieldModel> out = fields(node, false, "derived");
  for (const FieldModel& f : out) {
    if (!f.enum_values.empty()) throw std::runtime_error("derived." + f.name + ": a derived attribute cannot be an enum");
  }
  return out;
}

std::vector<InterfaceModel> read_interfaces(const YAML::Node& node) {
  std::vector<InterfaceModel> out;
  if (!node) return out;
  if (!node.IsMap()) throw std::runtime_error("interfaces: expected a map of interface name: declaration");
  std::set<std::string> type_names;
  for (const auto& kv : node) {
    const std::string name = kv.first.as<std::string>();
    out.push_back(interface(name, kv.second, "interfaces." + name));
    if (!type_names.insert(out.back().type_name).second) {
      throw std::runtime_error("interfaces." + name + ": its class name " + out.back().type_name + " is another interface's");
    }
  }
  return out;
}

}  // namespace opgen
