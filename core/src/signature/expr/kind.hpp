// Static kinds of manifest expressions: what a name or a subexpression may hold. Kinds are
// checked once, when a plan is compiled; evaluation trusts them.
#pragma once

#include <cstdint>
#include <string>

namespace tileops::expr {

enum class Base : std::uint8_t {
  Bool,
  Int,      // Dim indices, int parameters, integer arithmetic
  Float,
  Num,      // int or float, decided by the value (an `int | float` parameter)
  Str,
  DType,
  IntList,  // Shape indices, list[int] parameters, shapes (`Seq[Int]`)
  Axes,     // int or list of ints (an `int | list[int]` parameter)
  Device,
  None,     // the literal None
  Tensor,   // a tensor name: only an argument of present() and bytes()
};

struct Kind {
  Base base = Base::Int;
  bool maybe = false;  // Maybe[base]: may also be None (an omitted `X | None` parameter)

  friend bool operator==(const Kind&, const Kind&) = default;
};

constexpr Kind kind_of(Base b, bool maybe = false) { return Kind{b, maybe}; }

// "Int", "Seq[Int]", "Maybe[Float]", ...
std::string kind_name(Kind kind);

// True when a value of kind `have` may stand where `want` is required: equal kinds; Int where
// Float, Num or Axes is wanted; Float where Num is; IntList where Axes is; X or None where
// Maybe[X] is.
bool kind_accepts(Kind want, Kind have);

constexpr bool is_numeric(Kind k) {
  return !k.maybe && (k.base == Base::Int || k.base == Base::Float || k.base == Base::Num);
}

}  // namespace tileops::expr
