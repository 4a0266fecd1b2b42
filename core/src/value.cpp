#include "tileops/value.hpp"

#include <sstream>

#include "join.hpp"
#include "tileops/errors.hpp"

namespace tileops {
namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

// Formats any alternative of a Value or an IndexValue.
const auto kValueStr = Overloaded{
    [](std::monostate) -> std::string { return "None"; },
    [](bool b) -> std::string { return b ? "true" : "false"; },
    [](std::int64_t i) { return std::to_string(i); },
    [](double d) {
      std::ostringstream os;
      os << d;
      return os.str();
    },
    [](const std::string& s) { return "'" + s + "'"; },
    [](DType d) { return std::string(dtype_name(d)); },
    [](ShapeView v) { return shape_str(v); },
    [](const Device& d) { return d.str(); },
    [](const Tensor& t) { return t.str(); },
};

}  // namespace

std::string value_str(const Value& value) { return std::visit(kValueStr, value); }
std::string value_str(const IndexValue& value) { return std::visit(kValueStr, value); }

std::string_view value_kind(const Value& value) {
  static constexpr std::string_view kNames[] = {"None", "bool",      "int",    "float", "str",
                                                "dtype", "list[int]", "device", "tensor"};
  return kNames[value.index()];
}

bool value_equal(const Value& a, const Value& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&b](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Tensor>) {
          return x.is_same(std::get<Tensor>(b));
        } else {
          return x == std::get<T>(b);
        }
      },
      a);
}

ParamMap::ParamMap(std::initializer_list<std::pair<std::string, Value>> items) {
  for (const auto& [name, value] : items) set(name, value);
}

void ParamMap::set(std::string name, Value value) {
  for (auto& item : items_) {
    if (item.first == name) {
      item.second = std::move(value);
      return;
    }
  }
  items_.emplace_back(std::move(name), std::move(value));
}

const Value* ParamMap::find(std::string_view name) const {
  for (const auto& item : items_) {
    if (item.first == name) return &item.second;
  }
  return nullptr;
}

const Value& ParamMap::at(std::string_view name) const {
  if (const Value* v = find(name)) return *v;
  const std::string known = join_with(items_, [](std::string& out, const auto& item) { out += item.first; });
  throw ValueError("no parameter named '" + std::string(name) + "'; known: " + (known.empty() ? "(none)" : known));
}

}  // namespace tileops
