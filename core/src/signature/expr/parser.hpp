// Parses manifest expressions: Python's expression grammar restricted to the closed manifest
// language (literals, names, arithmetic, comparisons with chaining, and/or/not, `in`,
// conditionals, list and tuple displays with `*` items, calls, attributes and subscripts).
#pragma once

#include <string_view>

#include "signature/expr/ast.hpp"

namespace tileops::expr {

// The syntax tree of `source`, in time linear in its length. Throws ValueError "column N:
// reason" for text outside the language, including the forms manifests reject (`is`, lambdas,
// comprehensions) and nesting deeper than kMaxExpressionDepth.
Ast parse_expression(std::string_view source);

}  // namespace tileops::expr
