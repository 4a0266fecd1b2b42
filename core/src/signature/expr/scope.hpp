// The names an expression may use, as a plan declares them: each resolves to a check-state slot or
// a tensor id, with its kind.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "signature/expr/kind.hpp"

namespace tileops::expr {

struct NameInfo {
  enum class What : std::uint8_t { Slot, Tensor };
  What what = What::Slot;
  int index = -1;
  Kind kind;
  // The finite set of values of an enum or DType name, as strings; empty when unconstrained.
  // Comparing the name with a literal outside this set is a compile error.
  std::vector<std::string> members;
};

class Scope {
 public:
  // Adds `name`; a later add of the same name replaces it.
  void add(std::string name, NameInfo info);
  // The declaration of `name`, or nullptr.
  const NameInfo* find(std::string_view name) const;
  // The name of slot `index`, or "" (used in messages).
  std::string_view slot_name(int index) const;
  std::string_view tensor_name(int index) const;

 private:
  std::vector<std::pair<std::string, NameInfo>> names_;
};

}  // namespace tileops::expr
