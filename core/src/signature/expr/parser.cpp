#include "signature/expr/parser.hpp"

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

class Parser {
 public:
  explicit Parser(std::string_view source) : tokens_(tokenize(source)) {}

  Ast parse_all() {
    Ast e = expression();
    if (peek().type != TokenType::End) fail_here("unexpected " + describe(peek()));
    return e;
  }

 private:
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;

  const Token& peek(std::size_t ahead = 0) const {
    const std::size_t i = pos_ + ahead;
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }
  Token next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  bool at_op(std::string_view op) const { return peek().type == TokenType::Op && peek().text == op; }
  bool at_word(std::string_view w) const { return peek().type == TokenType::Name && peek().text == w; }

  static std::string describe(const Token& t) {
    switch (t.type) {
      case TokenType::End: return "end of expression";
      case TokenType::Str: return "string '" + t.text + "'";
      default: return "'" + t.text + "'";
    }
  }
  [[noreturn]] void fail_at(int column, const std::string& what) const {
    throw ValueError("column " + std::to_string(column) + ": " + what);
  }
  [[noreturn]] void fail_here(const std::string& what) const { fail_at(peek().column, what); }

  void expect_op(std::string_view op) {
    if (!at_op(op)) fail_here("expected '" + std::string(op) + "', found " + describe(peek()));
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
    Ast value = or_test();
    if (!at_word("if")) return value;
    const int column = value.column;
    next();
    Ast cond = or_test();
    if (!at_word("else")) fail_here("expected 'else' in a conditional expression, found " + describe(peek()));
    next();
    Ast other = expression();
    Ast a = node(AstType::IfElse, column);
    a.kids = {std::move(value), std::move(cond), std::move(other)};
    return a;
  }

  Ast or_test() { return bool_chain("or", AstType::Or, [this] { return and_test(); }); }
  Ast and_test() { return bool_chain("and", AstType::And, [this] { return not_test(); }); }

  template <class F>
  Ast bool_chain(std::string_view word, AstType type, F operand) {
    Ast first = operand();
    if (!at_word(word)) return first;
    Ast a = node(type, first.column);
    a.kids.push_back(std::move(first));
    while (at_word(word)) {
      next();
      a.kids.push_back(operand());
    }
    return a;
  }

  Ast not_test() {
    if (at_word("not")) {
      const int column = next().column;
      Ast a = node(AstType::Unary, column);
      a.text = "not";
      a.kids.push_back(not_test());
      return a;
    }
    return comparison();
  }

  // The comparison operator at the cursor ("" when none), consuming it.
  std::string comparison_op() {
    const Token& t = peek();
    if (t.type == TokenType::Op &&
        (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == "<=" || t.text == ">" || t.text == ">=")) {
      return next().text;
    }
    if (at_word("in")) {
      next();
      return "in";
    }
    if (at_word("not") && peek(1).type == TokenType::Name && peek(1).text == "in") {
      next();
      next();
      return "not in";
    }
    if (at_word("is")) fail_here("'is' is not in the expression language; test presence with present(x)");
    return "";
  }

  Ast comparison() {
    Ast first = arith();
    std::string op = comparison_op();
    if (op.empty()) return first;
    Ast a = node(AstType::Compare, first.column);
    a.kids.push_back(std::move(first));
    while (!op.empty()) {
      a.ops.push_back(op);
      a.kids.push_back(arith());
      op = comparison_op();
    }
    return a;
  }

  Ast binary(Ast lhs, std::string op, Ast rhs) {
    Ast a = node(AstType::Binary, lhs.column);
    a.text = std::move(op);
    a.kids = {std::move(lhs), std::move(rhs)};
    return a;
  }

  Ast arith() {
    Ast lhs = term();
    while (at_op("+") || at_op("-")) {
      std::string op = next().text;
      lhs = binary(std::move(lhs), std::move(op), term());
    }
    return lhs;
  }

  Ast term() {
    Ast lhs = factor();
    while (at_op("*") || at_op("/") || at_op("//") || at_op("%")) {
      std::string op = next().text;
      lhs = binary(std::move(lhs), std::move(op), factor());
    }
    return lhs;
  }

  Ast factor() {
    if (at_op("-") || at_op("+")) {
      const Token t = next();
      Ast a = node(AstType::Unary, t.column);
      a.text = t.text;
      a.kids.push_back(factor());
      return a;
    }
    return power();
  }

  Ast power() {
    Ast base = primary();
    if (!at_op("**")) return base;
    next();
    return binary(std::move(base), "**", factor());
  }

  Ast primary() {
    Ast a = atom();
    for (;;) {
      if (at_op("(")) {
        Ast call = node(AstType::Call, a.column);
        next();
        call.kids.push_back(std::move(a));
        if (!at_op(")")) {
          for (;;) {
            call.kids.push_back(argument());
            if (at_op(",")) {
              next();
              if (at_op(")")) break;
              continue;
            }
            break;
          }
        }
        expect_op(")");
        a = std::move(call);
      } else if (at_op("[")) {
        Ast sub = node(AstType::Subscript, a.column);
        next();
        sub.kids.push_back(std::move(a));
        for (;;) {
          sub.kids.push_back(expression());
          if (!at_op(",")) break;
          next();
          if (at_op("]")) break;
        }
        if (at_op(":")) fail_here("slices are not in the expression language");
        expect_op("]");
        a = std::move(sub);
      } else if (at_op(".")) {
        next();
        if (peek().type != TokenType::Name) fail_here("expected an attribute name after '.', found " + describe(peek()));
        Ast attr = node(AstType::Attr, a.column);
        attr.text = next().text;
        attr.kids.push_back(std::move(a));
        a = std::move(attr);
      } else {
        return a;
      }
    }
  }

  Ast argument() {
    if (peek().type == TokenType::Name && peek(1).type == TokenType::Op && peek(1).text == "=") {
      const Token name = next();
      next();
      Ast kw = node(AstType::Keyword, name.column);
      kw.text = name.text;
      kw.kids.push_back(expression());
      return kw;
    }
    if (at_op("*")) fail_here("'*' arguments are not in the expression language");
    return expression();
  }

  Ast list_item() {
    if (at_op("*")) {
      const int column = next().column;
      Ast star = node(AstType::Star, column);
      star.kids.push_back(arith());
      return star;
    }
    return expression();
  }

  Ast atom() {
    const Token t = peek();
    switch (t.type) {
      case TokenType::Int: {
        next();
        Ast a = node(AstType::Int, t.column);
        a.ival = t.ival;
        a.text = t.text;
        return a;
      }
      case TokenType::Float: {
        next();
        Ast a = node(AstType::Float, t.column);
        a.fval = t.fval;
        a.text = t.text;
        return a;
      }
      case TokenType::Str: {
        next();
        Ast a = node(AstType::Str, t.column);
        a.text = t.text;
        return a;
      }
      case TokenType::Name: {
        next();
        if (t.text == "True" || t.text == "true" || t.text == "False" || t.text == "false") {
          Ast a = node(AstType::Bool, t.column);
          a.ival = (t.text == "True" || t.text == "true") ? 1 : 0;
          return a;
        }
        if (t.text == "None") return node(AstType::None, t.column);
        if (is_keyword(t.text)) fail_at(t.column, "unexpected keyword '" + t.text + "'");
        Ast a = node(AstType::Name, t.column);
        a.text = t.text;
        return a;
      }
      case TokenType::Op:
        if (t.text == "(") return parenthesized();
        if (t.text == "[") return list_display();
        break;
      case TokenType::End:
        break;
    }
    fail_here("unexpected " + describe(t));
  }

  Ast parenthesized() {
    const int column = next().column;
    if (at_op(")")) {
      next();
      return node(AstType::Tuple, column);
    }
    Ast first = expression();
    if (at_word("for")) fail_here("comprehensions are not in the expression language");
    if (!at_op(",")) {
      expect_op(")");
      return first;
    }
    Ast tuple = node(AstType::Tuple, column);
    tuple.kids.push_back(std::move(first));
    while (at_op(",")) {
      next();
      if (at_op(")")) break;
      tuple.kids.push_back(expression());
    }
    expect_op(")");
    return tuple;
  }

  Ast list_display() {
    const int column = next().column;
    Ast list = node(AstType::List, column);
    if (at_op("]")) {
      next();
      return list;
    }
    for (;;) {
      list.kids.push_back(list_item());
      if (at_word("for")) fail_here("comprehensions are not in the expression language");
      if (!at_op(",")) break;
      next();
      if (at_op("]")) break;
    }
    expect_op("]");
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
      if (a.text == "+" || a.text == "-") return 5;
      if (a.text == "**") return 8;
      return 6;
    default: return 9;
  }
}

std::string wrapped(const Ast& kid, int min_precedence) {
  std::string s = to_source(kid);
  return precedence(kid) < min_precedence ? "(" + s + ")" : s;
}

std::string joined(const std::vector<Ast>& kids, std::size_t from, const std::string& sep) {
  std::string s;
  for (std::size_t i = from; i < kids.size(); ++i) {
    if (i > from) s += sep;
    s += to_source(kids[i]);
  }
  return s;
}

}  // namespace

Ast parse_expression(std::string_view source) { return Parser(source).parse_all(); }

std::string to_source(const Ast& a) {
  switch (a.type) {
    case AstType::Int:
    case AstType::Float: return a.text;
    case AstType::Str: return "'" + a.text + "'";
    case AstType::Bool: return a.ival ? "True" : "False";
    case AstType::None: return "None";
    case AstType::Name: return a.text;
    case AstType::Unary:
      return a.text == "not" ? "not " + wrapped(a.kids[0], 3) : a.text + wrapped(a.kids[0], 7);
    case AstType::Binary: {
      const int p = precedence(a);
      const bool right_assoc = a.text == "**";
      return wrapped(a.kids[0], right_assoc ? p + 1 : p) + " " + a.text + " " +
             wrapped(a.kids[1], right_assoc ? p : p + 1);
    }
    case AstType::And:
    case AstType::Or: {
      const int p = precedence(a);
      std::string s;
      for (std::size_t i = 0; i < a.kids.size(); ++i) {
        if (i) s += a.type == AstType::And ? " and " : " or ";
        s += wrapped(a.kids[i], p + 1);
      }
      return s;
    }
    case AstType::Compare: {
      std::string s = wrapped(a.kids[0], 5);
      for (std::size_t i = 0; i < a.ops.size(); ++i) s += " " + a.ops[i] + " " + wrapped(a.kids[i + 1], 5);
      return s;
    }
    case AstType::IfElse:
      return wrapped(a.kids[0], 1) + " if " + wrapped(a.kids[1], 1) + " else " + wrapped(a.kids[2], 0);
    case AstType::List: return "[" + joined(a.kids, 0, ", ") + "]";
    case AstType::Tuple: return a.kids.size() == 1 ? "(" + to_source(a.kids[0]) + ",)" : "(" + joined(a.kids, 0, ", ") + ")";
    case AstType::Star: return "*" + wrapped(a.kids[0], 5);
    case AstType::Call: return to_source(a.kids[0]) + "(" + joined(a.kids, 1, ", ") + ")";
    case AstType::Keyword: return a.text + "=" + to_source(a.kids[0]);
    case AstType::Attr: return wrapped(a.kids[0], 9) + "." + a.text;
    case AstType::Subscript: return wrapped(a.kids[0], 9) + "[" + joined(a.kids, 1, ", ") + "]";
  }
  return "";
}

}  // namespace tileops::expr
