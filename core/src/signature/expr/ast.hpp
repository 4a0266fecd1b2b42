// The syntax tree of one manifest expression, as the parser produces it (before names are
// resolved or kinds checked).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tileops::expr {

// The deepest nesting an expression may have: brackets, calls, unary operators, `not`, `**`
// exponents, conditionals and attribute reads each add a level (a flat run such as
// `a + b + c` or `a < b < c` is one level however long). Bounds the stack every recursive pass
// over the tree uses: parsing, compiling and evaluating the deepest expression allowed fits in
// a 1 MiB thread stack, sanitizer builds included.
inline constexpr int kMaxExpressionDepth = 128;

// The longest expression source, in characters.
inline constexpr std::size_t kMaxExpressionLength = std::size_t{1} << 20;

enum class AstType : std::uint8_t {
  Int,        // ival
  Float,      // fval
  Str,        // text
  Bool,       // ival 0 or 1
  None,
  Name,       // text
  Unary,      // text: "-", "+" or "not"; kids[0]
  Binary,     // kids[0] ops[0] kids[1] ops[1] kids[2] ..., folded left to right: a run of one
              // precedence level ("+" and "-", or "*", "/", "//" and "%"), or a single "**"
  And,        // kids (two or more)
  Or,         // kids (two or more)
  Compare,    // ops[i] compares kids[i] with kids[i + 1]: "==", "!=", "<", "<=", ">", ">=", "in", "not in"
  IfElse,     // kids: value if true, condition, value if false
  List,       // [a, *b, ...]; kids
  Tuple,      // (a, b, ...); kids
  Star,       // *kids[0], only as an item of a list display
  Call,       // kids[0]: callee (Name or Attr); kids[1..]: arguments (Keyword for name=value)
  Keyword,    // text = kids[0]
  Attr,       // kids[0].text
  Subscript,  // kids[0][kids[1], ...]
};

struct Ast {
  AstType type = AstType::None;
  std::string text;
  std::int64_t ival = 0;
  double fval = 0;
  int column = 0;  // 1-based position of the node's first character in the source text
  int height = 0;  // levels of descendants below this node (0 for a leaf)
  std::vector<std::string> ops;
  std::vector<Ast> kids;
};

// Appends `kid` to `parent.kids`, keeping `parent.height`. Throws ValueError "column N: ..."
// (N: the kid's column) when the parent would nest deeper than kMaxExpressionDepth.
void add_kid(Ast& parent, Ast kid);

// The expression written back in canonical form (single spaces around binary operators,
// minimal parentheses kept as written), used to compare two declarations structurally.
std::string to_source(const Ast& ast);

}  // namespace tileops::expr
