#include "cpp_type.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace opgen {
namespace {

// Dtype names a parameter type may choose among ("bool" always names the boolean kind).
const std::vector<std::string> kDTypes = {"int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16", "float32", "float64"};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// The alternatives of a union type, None excluded; `nullable` says whether None was one.
std::vector<std::string> alternatives(const std::string& type, bool& nullable) {
  std::vector<std::string> out;
  nullable = false;
  std::size_t start = 0;
  while (start <= type.size()) {
    const auto bar = type.find('|', start);
    const std::string part = trim(type.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
    if (part == "None") {
      nullable = true;
    } else if (!part.empty()) {
      out.push_back(part);
    }
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  return out;
}

bool is_dtype(const std::string& name) { return std::find(kDTypes.begin(), kDTypes.end(), name) != kDTypes.end(); }

// A string literal alternative, e.g. 'BSHD': a str restricted to the literals listed.
bool is_literal(const std::string& kind) { return kind.size() >= 2 && kind.front() == '\'' && kind.back() == '\''; }

std::string base_type(const std::string& kind) {
  if (kind == "int") return "std::int64_t";
  if (kind == "float") return "double";
  if (kind == "bool") return "bool";
  if (kind == "str") return "std::string";
  if (kind == "list[int]") return "std::vector<std::int64_t>";
  if (kind == "device") return "Device";
  throw std::runtime_error("parameter type '" + kind + "' has no C++ form");
}

// The C++ type of the non-None part of a type.
std::string value_type(const std::vector<std::string>& kinds) {
  if (std::all_of(kinds.begin(), kinds.end(), is_dtype)) return "DType";
  if (std::all_of(kinds.begin(), kinds.end(), is_literal)) return "std::string";
  if (kinds.size() == 1) return base_type(kinds[0]);
  std::string v = "std::variant<";
  for (std::size_t i = 0; i < kinds.size(); ++i) v += (i ? ", " : "") + base_type(kinds[i]);
  return v + ">";
}

// `text` as a C++ string literal: quotes, backslashes and control characters escaped (octal, so
// that no following digit can extend an escape).
std::string string_literal(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      const char octal[] = {'\\', static_cast<char>('0' + (u >> 6)), static_cast<char>('0' + ((u >> 3) & 7)),
                            static_cast<char>('0' + (u & 7)), '\0'};
      out += octal;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string scalar_default(const std::vector<std::string>& kinds, const YAML::Node& node) {
  const std::string text = node.Scalar();
  if (std::all_of(kinds.begin(), kinds.end(), is_dtype)) return "DType::" + text;
  const bool has_float = std::find(kinds.begin(), kinds.end(), "float") != kinds.end();
  const bool has_int = std::find(kinds.begin(), kinds.end(), "int") != kinds.end();
  const bool has_bool = std::find(kinds.begin(), kinds.end(), "bool") != kinds.end();
  if (has_bool && (text == "true" || text == "false")) return text;
  const bool integral = !text.empty() && text.find_first_not_of("+-0123456789") == std::string::npos;
  if (has_int && integral) return "std::int64_t{" + text + "}";
  if (has_float && (integral || text.find_first_not_of("+-0123456789.eE") == std::string::npos)) {
    return integral ? text + ".0" : text;
  }
  if (std::find(kinds.begin(), kinds.end(), "device") != kinds.end()) return "Device::parse(" + string_literal(text) + ")";
  if (std::find(kinds.begin(), kinds.end(), "str") != kinds.end() || std::any_of(kinds.begin(), kinds.end(), is_literal)) {
    return "std::string(" + string_literal(text) + ")";
  }
  throw std::runtime_error("default '" + text + "' does not fit its parameter's type");
}

}  // namespace

bool is_scalar(const std::string& cpp) {
  return cpp == "std::int64_t" || cpp == "double" || cpp == "bool" || cpp == "DType";
}

std::string cpp_type(const std::string& manifest_type) {
  bool nullable = false;
  const auto kinds = alternatives(manifest_type, nullable);
  if (kinds.empty()) throw std::runtime_error("parameter type '" + manifest_type + "' has no C++ form");
  const std::string v = value_type(kinds);
  return nullable ? "std::optional<" + v + ">" : v;
}

std::string cpp_default(const std::string& manifest_type, const YAML::Node& node) {
  bool nullable = false;
  const auto kinds = alternatives(manifest_type, nullable);
  if (node.IsNull()) return "std::nullopt";
  if (node.IsSequence()) {
    std::string list = "std::vector<std::int64_t>{";
    for (std::size_t i = 0; i < node.size(); ++i) list += (i ? ", " : "") + node[i].Scalar();
    return list + "}";
  }
  return scalar_default(kinds, node);
}

}  // namespace opgen
