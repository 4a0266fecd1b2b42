#include "manifest/param_type.hpp"

#include <algorithm>

#include "tileops/errors.hpp"

namespace tileops::manifest {
namespace {

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

// Splits on '|' outside brackets.
std::vector<std::string> alternatives(std::string_view text) {
  std::vector<std::string> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '[') ++depth;
    if (text[i] == ']') --depth;
    if (text[i] == '|' && depth == 0) {
      out.push_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  out.push_back(trim(text.substr(start)));
  return out;
}

}  // namespace

ParamType parse_param_type(std::string_view text) {
  ParamType t;
  t.text = std::string(text);
  bool plain_str = false;
  for (const std::string& alt : alternatives(text)) {
    DType d;
    if (alt == "None") {
      t.none = true;
    } else if (alt == "bool") {
      t.boolean = true;
    } else if (alt == "int") {
      t.integer = true;
    } else if (alt == "float") {
      t.real = true;
    } else if (alt == "Number") {
      t.integer = t.real = true;
    } else if (alt == "list[int]" || alt == "tuple[int, ...]" || alt == "Seq[Int]") {
      t.int_list = true;
    } else if (alt == "str") {
      t.str = plain_str = true;
    } else if (alt.size() >= 2 && (alt.front() == '\'' || alt.front() == '"') && alt.back() == alt.front()) {
      t.str = true;
      t.literals.push_back(alt.substr(1, alt.size() - 2));
    } else if (alt == "dtype" || alt == "torch.dtype") {
      t.dtype = true;
    } else if (alt == "device" || alt == "torch.device") {
      t.device = true;
    } else if (try_parse_dtype(alt, d) && dtype_name(d) == alt) {
      t.dtype = true;
      t.dtypes.push_back(d);
    } else {
      throw ValueError("unknown type '" + alt + "' in '" + std::string(text) +
                       "'; a type is a union of None, bool, int, float, list[int], str, 'literal', dtype names, "
                       "dtype or device");
    }
  }
  if (plain_str && !t.literals.empty()) {
    throw ValueError("type '" + std::string(text) + "' mixes str with string literals");
  }
  if (t.str && t.device && t.literals.empty()) t.str = false;  // "device | str": a device given by name
  t.kind();
  return t;
}

expr::Kind ParamType::kind() const {
  using expr::Base;
  const int count = boolean + integer + real + int_list + str + dtype + device;
  Base base = Base::None;
  if (count == 1) {
    base = boolean ? Base::Bool
           : integer ? Base::Int
           : real ? Base::Float
           : int_list ? Base::IntList
           : str ? Base::Str
           : dtype ? Base::DType
                   : Base::Device;
  } else if (count == 2 && integer && real) {
    base = Base::Num;
  } else if (count == 2 && integer && int_list) {
    base = Base::Axes;
  } else if (count != 0) {
    throw ValueError("type '" + text + "' is a union no single kind describes");
  } else {
    throw ValueError("type '" + text + "' allows only None");
  }
  return expr::Kind{base, none};
}

std::vector<std::string> ParamType::members() const {
  std::vector<std::string> out;
  if (str) out = literals;
  if (dtype) {
    for (DType d : dtypes) out.emplace_back(dtype_name(d));
  }
  return out;
}

bool ParamType::finite() const {
  return (boolean && !integer && !real && !int_list && !str && !dtype && !device) ||
         (str && !literals.empty()) || (dtype && !dtypes.empty());
}

std::optional<Value> ParamType::convert(const Value& value) const {
  switch (value.index()) {
    case 0:
      if (none) return value;
      break;
    case 1:
      if (boolean) return value;
      break;
    case 2:
      if (integer) return value;
      if (real) return static_cast<double>(std::get<std::int64_t>(value));
      break;
    case 3:
      if (real) return value;
      break;
    case 4: {
      const auto& s = std::get<std::string>(value);
      if (str && (literals.empty() || std::find(literals.begin(), literals.end(), s) != literals.end())) return value;
      DType d;
      if (dtype && try_parse_dtype(s, d) && (dtypes.empty() || std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end())) {
        return d;
      }
      if (device) {
        try {
          return Device::parse(s);
        } catch (const ValueError&) {
          return std::nullopt;
        }
      }
      break;
    }
    case 5:
      if (dtype && (dtypes.empty() || std::find(dtypes.begin(), dtypes.end(), std::get<DType>(value)) != dtypes.end())) {
        return value;
      }
      break;
    case 6:
      if (int_list) return value;
      break;
    case 7:
      if (device) return value;
      break;
    default: break;
  }
  return std::nullopt;
}

}  // namespace tileops::manifest
