// The `type:` of a construction parameter, e.g. "int | list[int] | None",
// "float16 | bfloat16 | float32" (a dtype parameter), "'silu' | 'gelu'" (an enum) or
// "device | None".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "signature/expr/kind.hpp"
#include "tileops/dtype.hpp"
#include "tileops/value.hpp"

namespace tileops::manifest {

struct ParamType {
  std::string text;  // as written
  bool none = false;
  bool boolean = false;
  bool integer = false;
  bool real = false;
  bool int_list = false;
  bool str = false;
  bool dtype = false;
  bool device = false;
  std::vector<DType> dtypes;          // the allowed dtypes; empty with `dtype`: any dtype
  std::vector<std::string> literals;  // the allowed strings; empty with `str`: any string

  // The expression kind of a parameter of this type.
  expr::Kind kind() const;
  // The finite set of values for literal checks (enum literals or dtype names); empty otherwise.
  std::vector<std::string> members() const;
  // Finitely many values (bool, an enum, a dtype set): the parameter can be a discriminant.
  bool finite() const;

  // `value` converted to this type's canonical form (a dtype or device given as a string is
  // parsed; an int given for a float becomes a float), or nullopt when it is not of this type.
  std::optional<Value> convert(const Value& value) const;
};

// Parses a type. Alternatives: None, bool, int, float, Number (int | float), list[int],
// tuple[int, ...], str, 'literal', a dtype name, dtype (any dtype), device. Throws ValueError
// naming an unknown alternative or a union no expression kind describes (e.g. bool | int).
ParamType parse_param_type(std::string_view text);

}  // namespace tileops::manifest
