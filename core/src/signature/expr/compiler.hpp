// Turns a parsed expression into a compiled one: names resolved against a Scope, kinds
// checked, primitives bound. Runs once per op class, when its plan is built.
#pragma once

#include <string>
#include <string_view>

#include "signature/expr/ast.hpp"
#include "signature/expr/node.hpp"
#include "signature/expr/scope.hpp"

namespace tileops::expr {

struct CompileOptions {
  bool allow_bytes = false;  // roofline formulas may call bytes(t)
};

// Compiles `ast` (parsed from `source`). Throws ValueError naming the offending subexpression:
// an unknown name or primitive, a kind mismatch, `.value` of a Maybe outside a branch where
// present() holds, a comparison with a literal outside a name's enum or dtype set, or a form
// the manifest language rejects (reading `x.shape`, comparing with None).
Expr compile_ast(const Ast& ast, std::string source, const Scope& scope, const CompileOptions& options = {});

// Parses and compiles `source`; parse errors are thrown as ValueError "column N: ...".
Expr compile_expression(std::string_view source, const Scope& scope, const CompileOptions& options = {});

}  // namespace tileops::expr
