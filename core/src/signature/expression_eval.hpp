// Evaluating one manifest expression outside any manifest: for tests and tools that exercise
// the expression language directly.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tileops/value.hpp"

namespace tileops::expr {

// A name an expression may read: its declared type, as a manifest writes it (a parameter type
// such as "int", "float | None", "list[int]", "int | list[int] | None", "float16 | bfloat16",
// or a forall kind "Dim", "Shape", "DType[a | b]"), and its value.
struct Variable {
  std::string name;
  std::string type;
  Value value;
};

// Parses, compiles against `variables` and evaluates `source`. Throws ValueError naming the
// column for a syntax error, the subexpression for a name or kind error, and the reason for an
// evaluation error (division by zero, a primitive's domain, .value of None).
Value evaluate_expression(std::string_view source, const std::vector<Variable>& variables);

}  // namespace tileops::expr
