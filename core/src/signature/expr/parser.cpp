#include "signature/expr/parser.hpp"

#include <algorithm>
#include <utility>

#include "signature/expr/lexer.hpp"
#include "tileops/errors.hpp"

namespace tileops::expr {
namespace {

bool is_keyword(const std::string& s) {
  return s == "and" || s == "or" || s == "not" || s == "in" || s == "is" || s == "if" || s == "else" ||
         s == "lambda" || s == "for" || s == "True" || s == "False" || s == "true" || s == "false" ||
         s == "None";
}

[[noreturn]] void too_deep(int column) {
  throw ValueError("column " + std::to_string(column) + ": the expression nests more than " +
                   std::to_string(kMaxExpressionDepth) + " levels deep");
}

// Precedence of the binary operator levels, weakest first (Python's order).
enum Level : int { kNone = 0, kOr = 1, kAnd = 2, kNot = 3, kCompare = 4, kSum = 5, kProduct = 6, kUnary = 7, kPower = 8 };

// A precedence-climbing parser. Each level of nesting costs a handful of small frames (the
// slow and error paths live in functions of their own), so that kMaxExpressionDepth levels fit
// comfortably in a thread's stack.
class Parser {
 public:
  explicit Parser(std::string_view source) : tokens_(tokenize(source)) {}

  Ast parse_all() {
    Ast e = expression();
    if (peek().type != TokenType::End) fail_unexpected();
    return e;
  }

 private:
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int nesting_ = 0;

  // One level of nesting for as long as it lives: every recursion of the parser passes through
  // one, so the parser's own stack stays within kMaxExpressionDepth levels.
  class Nest {
   public:
    explicit Nest(Parser& p) : p_(p) {
      if (p_.nesting_ == kMaxExpressionDepth) too_deep(p_.peek().column);
      ++p_.nesting_;
    }
    ~Nest() { --p_.nesting_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;

   private:
    Parser& p_;
  };

  const Token& peek(std::size_t ahead = 0) const {
    const std::size_t i = pos_ + ahead;
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }
  const Token& next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  bool at_op(std::string_view op) const { return peek().type == TokenType::Op && peek().text == op; }
  bool at_word(std::string_view w) const { return peek().type == TokenType::Name && peek().text == w; }

  static std::string describe(const Token& t) {
    switch (t.type) {
      case TokenType::End: return "end of expression";
      case TokenType::Str: return "string '" + t.text + "'";
      default: return "'" + t.text + "'";
    }
  }
  [[noreturn, gnu::noinline, gnu::cold]] void fail_at(int column, const std::string& what) const {
    throw ValueError("column " + std::to_string(column) + ": " + what);
  }
  [[noreturn, gnu::noinline, gnu::cold]] void fail_here(const char* what) const { fail_at(peek().column, what); }
  // "<what>, found <the token at the cursor>".
  [[noreturn, gnu::noinline, gnu::cold]] void fail_found(const char* what) const {
    fail_at(peek().column, std::string(what) + ", found " + describe(peek()));
  }
  [[noreturn, gnu::noinline, gnu::cold]] void fail_unexpected() const { fail_at(peek().column, "unexpected " + describe(peek())); }
  [[noreturn, gnu::noinline, gnu::cold]] void fail_keyword(const Token& t) const {
    fail_at(t.column, "unexpected keyword '" + t.text + "'");
  }

  void expect_op(const char* op, const char* expected) {
    if (!at_op(op)) fail_found(expected);
    next();
  }

  static Ast node(AstType type, int column) {
    Ast a;
    a.type = type;
    a.column = column;
    return a;
  }

  Ast expression() {
    if (at_word("lambda")) fail_here("lambda is not in the expression language");
    Ast value = binary(kOr);
    if (!at_word("if")) return value;
    return conditional(std::move(value));
  }

  [[gnu::noinline]] Ast conditional(Ast value) {
    const int column = value.column;
    next();
    const Nest nest(*this);
    Ast cond = binary(kOr);
    if (!at_word("else")) fail_found("expected 'else' in a conditional expression");
    next();
    Ast other = expression();
    Ast a = node(AstType::IfElse, column);
    add_kid(a, std::move(value));
    add_kid(a, std::move(cond));
    add_kid(a, std::move(other));
    return a;
  }

  // The level of the binary operator at the cursor (kNone when there is none).
  Level level_here() const {
    const Token& t = peek();
    if (t.type == TokenType::Op) {
      const std::string& op = t.text;
      if (op == "+" || op == "-") return kSum;
      if (op == "*" || op == "/" || op == "//" || op == "%") return kProduct;
      if (op == "**") return kPower;
      if (op == "==" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=") return kCompare;
      return kNone;
    }
    if (t.type != TokenType::Name) return kNone;
    if (t.text == "or") return kOr;
    if (t.text == "and") return kAnd;
    if (t.text == "in" || t.text == "is") return kCompare;
    if (t.text == "not" && peek(1).type == TokenType::Name && peek(1).text == "in") return kCompare;
    return kNone;
  }

  // Operators binding at least as tightly as `min`, with their operands.
  Ast binary(Level min) {
    Ast lhs = prefix(min);
    for (Level level = level_here(); level != kNone && level >= min; level = level_here()) {
      lhs = run(level, std::move(lhs));
    }
    return lhs;
  }

  // `not` and unary signs, where the level allows them; a primary otherwise.
  Ast prefix(Level min) {
    const bool is_not = min <= kNot && at_word("not");
    const bool is_sign = min <= kUnary && (at_op("-") || at_op("+"));
    if (!is_not && !is_sign) return primary();
    return unary(is_not);
  }

  [[gnu::noinline]] Ast unary(bool is_not) {
    const Token& t = next();
    const Nest nest(*this);
    Ast a = node(AstType::Unary, t.column);
    a.text = t.text;
    add_kid(a, binary(is_not ? kNot : kUnary));
    return a;
  }

  // A left-to-right run of operators of `level` after `first`, as one node whatever its length
  // (`**`: one operator, right-associative).
  [[gnu::noinline]] Ast run(Level level, Ast first) {
    if (level == kPower) {
      next();
      const Nest nest(*this);
      Ast a = node(AstType::Binary, first.column);
      a.ops.push_back("**");
      add_kid(a, std::move(first));
      add_kid(a, binary(kUnary));
      return a;
    }
    const AstType type = level == kOr ? AstType::Or : level == kAnd ? AstType::And
                         : level == kCompare ? AstType::Compare : AstType::Binary;
    const Level operand = level == kOr ? kAnd : level == kAnd ? kNot : static_cast<Level>(level + 1);
    Ast a = node(type, first.column);
    add_kid(a, std::move(first));
    while (level_here() == level) {
      std::string op = next().text;
      if (op == "is") fail_at(tokens_[pos_ - 1].column, "'is' is not in the expression language; test presence with present(x)");
      if (op == "not") op += " " + next().text;
      if (type == AstType::Binary || type == AstType::Compare) a.ops.push_back(std::move(op));
      add_kid(a, binary(operand));
    }
    return a;
  }

  Ast primary() {
    Ast a = atom();
    for (;;) {
      if (at_op("(")) {
        a = call(std::move(a));
      } else if (at_op("[")) {
        a = subscript(std::move(a));
      } else if (at_op(".")) {
        a = attribute(std::move(a));
      } else {
        return a;
      }
    }
  }

  [[gnu::noinline]] Ast call(Ast callee) {
    const Nest nest(*this);
    Ast c = node(AstType::Call, callee.column);
    next();
    add_kid(c, std::move(callee));
    if (!at_op(")")) {
      for (;;) {
        add_kid(c, argument());
        if (!at_op(",")) break;
        next();
        if (at_op(")")) break;
      }
    }
    expect_op(")", "expected ')'");
    return c;
  }

  [[gnu::noinline]] Ast subscript(Ast base) {
    const Nest nest(*this);
    Ast sub = node(AstType::Subscript, base.column);
    next();
    add_kid(sub, std::move(base));
    for (;;) {
      add_kid(sub, expression());
      if (!at_op(",")) break;
      next();
      if (at_op("]")) break;
    }
    if (at_op(":")) fail_here("slices are not in the expression language");
    expect_op("]", "expected ']'");
    return sub;
  }

  [[gnu::noinline]] Ast attribute(Ast base) {
    next();
    if (peek().type != TokenType::Name) fail_found("expected an attribute name after '.'");
    Ast attr = node(AstType::Attr, base.column);
    attr.text = next().text;
    add_kid(attr, std::move(base));
    return attr;
  }

  Ast argument() {
    if (peek().type == TokenType::Name && peek(1).type == TokenType::Op && peek(1).text == "=") {
      const Token& name = next();
      next();
      Ast kw = node(AstType::Keyword, name.column);
      kw.text = name.text;
      add_kid(kw, expression());
      return kw;
    }
    if (at_op("*")) fail_here("'*' arguments are not in the expression language");
    return expression();
  }

  Ast list_item() {
    if (!at_op("*")) return expression();
    const int column = next().column;
    Ast star = node(AstType::Star, column);
    add_kid(star, binary(kSum));
    return star;
  }

  Ast atom() {
    const Token& t = peek();
    switch (t.type) {
      case TokenType::Int:
      case TokenType::Float:
      case TokenType::Str: return literal();
      case TokenType::Name: return name();
      case TokenType::Op:
        if (t.text == "(") return parenthesized();
        if (t.text == "[") return list_display();
        break;
      case TokenType::End: break;
    }
    fail_unexpected();
  }

  Ast literal() {
    const Token& t = next();
    Ast a = node(t.type == TokenType::Int ? AstType::Int : t.type == TokenType::Float ? AstType::Float : AstType::Str,
                 t.column);
    a.ival = t.ival;
    a.fval = t.fval;
    a.text = t.text;
    return a;
  }

  Ast name() {
    const Token& t = next();
    if (t.text == "True" || t.text == "true" || t.text == "False" || t.text == "false") {
      Ast a = node(AstType::Bool, t.column);
      a.ival = (t.text == "True" || t.text == "true") ? 1 : 0;
      return a;
    }
    if (t.text == "None") return node(AstType::None, t.column);
    if (is_keyword(t.text)) fail_keyword(t);
    Ast a = node(AstType::Name, t.column);
    a.text = t.text;
    return a;
  }

  [[gnu::noinline]] Ast parenthesized() {
    const Nest nest(*this);
    const int column = next().column;
    if (at_op(")")) {
      next();
      return node(AstType::Tuple, column);
    }
    Ast first = expression();
    if (at_word("for")) fail_here("comprehensions are not in the expression language");
    if (!at_op(",")) {
      expect_op(")", "expected ')'");
      return first;
    }
    Ast tuple = node(AstType::Tuple, column);
    add_kid(tuple, std::move(first));
    while (at_op(",")) {
      next();
      if (at_op(")")) break;
      add_kid(tuple, expression());
    }
    expect_op(")", "expected ')'");
    return tuple;
  }

  [[gnu::noinline]] Ast list_display() {
    const Nest nest(*this);
    const int column = next().column;
    Ast list = node(AstType::List, column);
    if (at_op("]")) {
      next();
      return list;
    }
    for (;;) {
      add_kid(list, list_item());
      if (at_word("for")) fail_here("comprehensions are not in the expression language");
      if (!at_op(",")) break;
      next();
      if (at_op("]")) break;
    }
    expect_op("]", "expected ']'");
    return list;
  }
};

int precedence(const Ast& a) {
  switch (a.type) {
    case AstType::IfElse: return 0;
    case AstType::Or: return 1;
    case AstType::And: return 2;
    case AstType::Unary: return a.text == "not" ? 3 : 7;
    case AstType::Compare: return 4;
    case AstType::Binary:
      if (a.ops[0] == "+" || a.ops[0] == "-") return 5;
      if (a.ops[0] == "**") return 8;
      return 6;
    default: return 9;
  }
}

// Appends the canonical source of `a` to `out`: each level writes its own text once, so the
// whole is linear in the length of the result.
void emit(const Ast& a, std::string& out);

void emit_wrapped(const Ast& kid, int min_precedence, std::string& out) {
  const bool paren = precedence(kid) < min_precedence;
  if (paren) out += '(';
  emit(kid, out);
  if (paren) out += ')';
}

void emit_joined(const std::vector<Ast>& kids, std::size_t from, std::string& out) {
  for (std::size_t i = from; i < kids.size(); ++i) {
    if (i > from) out += ", ";
    emit(kids[i], out);
  }
}

void emit(const Ast& a, std::string& out) {
  switch (a.type) {
    case AstType::Int:
    case AstType::Float: out += a.text; return;
    case AstType::Str: out += '\'' + a.text + '\''; return;
    case AstType::Bool: out += a.ival ? "True" : "False"; return;
    case AstType::None: out += "None"; return;
    case AstType::Name: out += a.text; return;
    case AstType::Unary:
      out += a.text == "not" ? "not " : a.text;
      emit_wrapped(a.kids[0], a.text == "not" ? 3 : 7, out);
      return;
    case AstType::Binary: {
      const int p = precedence(a);
      if (a.ops[0] == "**") {
        emit_wrapped(a.kids[0], p + 1, out);
        out += " ** ";
        emit_wrapped(a.kids[1], p, out);
        return;
      }
      emit_wrapped(a.kids[0], p, out);
      for (std::size_t i = 0; i < a.ops.size(); ++i) {
        out += ' ' + a.ops[i] + ' ';
        emit_wrapped(a.kids[i + 1], p + 1, out);
      }
      return;
    }
    case AstType::And:
    case AstType::Or: {
      const int p = precedence(a);
      for (std::size_t i = 0; i < a.kids.size(); ++i) {
        if (i) out += a.type == AstType::And ? " and " : " or ";
        emit_wrapped(a.kids[i], p + 1, out);
      }
      return;
    }
    case AstType::Compare:
      emit_wrapped(a.kids[0], 5, out);
      for (std::size_t i = 0; i < a.ops.size(); ++i) {
        out += ' ' + a.ops[i] + ' ';
        emit_wrapped(a.kids[i + 1], 5, out);
      }
      return;
    case AstType::IfElse:
      emit_wrapped(a.kids[0], 1, out);
      out += " if ";
      emit_wrapped(a.kids[1], 1, out);
      out += " else ";
      emit_wrapped(a.kids[2], 0, out);
      return;
    case AstType::List:
      out += '[';
      emit_joined(a.kids, 0, out);
      out += ']';
      return;
    case AstType::Tuple:
      out += '(';
      emit_joined(a.kids, 0, out);
      out += a.kids.size() == 1 ? ",)" : ")";
      return;
    case AstType::Star:
      out += '*';
      emit_wrapped(a.kids[0], 5, out);
      return;
    case AstType::Call:
      emit(a.kids[0], out);
      out += '(';
      emit_joined(a.kids, 1, out);
      out += ')';
      return;
    case AstType::Keyword:
      out += a.text + "=";
      emit(a.kids[0], out);
      return;
    case AstType::Attr:
      emit_wrapped(a.kids[0], 9, out);
      out += '.' + a.text;
      return;
    case AstType::Subscript:
      emit_wrapped(a.kids[0], 9, out);
      out += '[';
      emit_joined(a.kids, 1, out);
      out += ']';
      return;
  }
}

}  // namespace

void add_kid(Ast& parent, Ast kid) {
  if (kid.height >= kMaxExpressionDepth) too_deep(kid.column);
  parent.height = std::max(parent.height, kid.height + 1);
  parent.kids.push_back(std::move(kid));
}

Ast parse_expression(std::string_view source) { return Parser(source).parse_all(); }

std::string to_source(const Ast& a) {
  std::string out;
  emit(a, out);
  return out;
}

}  // namespace tileops::expr
