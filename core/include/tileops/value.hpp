// Values of construction parameters and of signature indices.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "tileops/device.hpp"
#include "tileops/dtype.hpp"
#include "tileops/export.hpp"
#include "tileops/shape.hpp"
#include "tileops/tensor.hpp"

namespace tileops {

// A parameter or index value. std::monostate is None (an omitted `int | None`, a null
// default); std::vector<int64_t> is a list or tuple of integers (and a Shape index's value);
// Tensor is a construction-time tensor.
using Value = std::variant<std::monostate, bool, std::int64_t, double, std::string, DType,
                           std::vector<std::int64_t>, Device, Tensor>;

// A solved index as a call record keeps it (IndexRecord): a Value that is never a tensor and
// whose integer list lives inline up to rank 6, so that recording a call allocates nothing.
using IndexValue = std::variant<std::monostate, bool, std::int64_t, double, std::string, DType, Shape, Device>;

// "None", "true", "3", "1e-05", "'silu'", "float16", "[2, 3]", "cuda:0", "Tensor(...)".
TILEOPS_API std::string value_str(const Value& value);
TILEOPS_API std::string value_str(const IndexValue& value);
// The kind's name for messages: "None", "bool", "int", "float", "str", "dtype", "list[int]",
// "device", "tensor".
TILEOPS_API std::string_view value_kind(const Value& value);
// Structural equality (tensors compare by identity).
TILEOPS_API bool value_equal(const Value& a, const Value& b);
// Chosen over std::variant's own == (which would need Tensor == Tensor).
inline bool operator==(const Value& a, const Value& b) { return value_equal(a, b); }

// Construction parameters by name, in the order they were added. Names are unique.
class TILEOPS_API ParamMap {
 public:
  ParamMap() = default;
  ParamMap(std::initializer_list<std::pair<std::string, Value>> items);

  // Adds or replaces `name`.
  void set(std::string name, Value value);
  // The value of `name`, or nullptr.
  const Value* find(std::string_view name) const;
  // The value of `name`; throws ValueError naming the known parameters when absent.
  const Value& at(std::string_view name) const;
  bool contains(std::string_view name) const { return find(name) != nullptr; }

  const std::vector<std::pair<std::string, Value>>& items() const { return items_; }
  std::size_t size() const { return items_.size(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  std::vector<std::pair<std::string, Value>> items_;
};

}  // namespace tileops
