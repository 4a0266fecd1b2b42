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
    const Nest nest(*this);
    Ast cond = or_test();
    if (!at_word("else")) fail_here("expected 'else' in a conditional expression, found " + describe(peek()));
    next();
    Ast other = expression();
    Ast a = node(AstType::IfElse, column);
    add_kid(a, std::move(value));
    add_kid(a, std::move(cond));
    add_kid(a, std::move(other));
    return a;
  }

  Ast or_test() { return bool_chain("or", AstType::Or, [this] { return and_test(); }); }
  Ast and_test() { return bool_chain("and", AstType::And, [this] { return not_test(); }); }

  template <class F>
  Ast bool_chain(std::string_view word, AstType type, F operand) {
    Ast first = operand();
    if (!at_word(word)) return first;
    Ast a = node(type, first.column);
    add_kid(a, std::move(first));
    while (at_word(word)) {
      next();
      add_kid(a, operand());
    }
    return a;
  }

  Ast not_test() {
    if (at_word("not")) {
      const int column = next().column;
      const Nest nest(*this);
      Ast a = node(AstType::Unary, column);
      a.text = "not";
      add_kid(a, not_test());
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
    add_kid(a, std::move(first));
    while (!op.empty()) {
      a.ops.push_back(std::move(op));
      add_kid(a, arith());
      op = comparison_op();
    }
    return a;
  }

  // A left-to-right run of operators of one precedence level, as one node whatever its length.
  template <class AtOp, class F>
  Ast run(AtOp at_level, F operand) {
    Ast first = operand();
    if (!at_level()) return first;
    Ast a = node(AstType::Binary, first.column);
    add_kid(a, std::move(first));
    while (at_level()) {
      a.ops.push_back(next().text);
      add_kid(a, operand());
    }
    return a;
  }

  Ast arith() {
    return run([this] { return at_op("+") || at_op("-"); }, [this] { return term(); });
  }

  Ast term() {
    return run([this] { return at_op("*") || at_op("/") || at_op("//") || at_op("%"); }, [this] { return factor(); });
  }

  Ast factor() {
    if (at_op("-") || at_op("+")) {
      const Token t = next();
      const Nest nest(*this);
      Ast a = node(AstType::Unary, t.column);
      a.text = t.text;
      add_kid(a, factor());
      return a;
    }
    return power();
  }

  Ast power() {
    Ast base = primary();
    if (!at_op("**")) return base;
    next();
    const Nest nest(*this);
    Ast a = node(AstType::Binary, base.column);
    a.ops.push_back("**");
    add_kid(a, std::move(base));
    add_kid(a, factor());
    return a;
  }

  Ast primary() {
    Ast a = atom();
    for (;;) {
      if (at_op("(")) {
        const Nest nest(*this);
        Ast call = node(AstType::Call, a.column);
        next();
        add_kid(call, std::move(a));
        if (!at_op(")")) {
          for (;;) {
            add_kid(call, argument());
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
        const Nest nest(*this);
        Ast sub = node(AstType::Subscript, a.column);
        next();
        add_kid(sub, std::move(a));
        for (;;) {
          add_kid(sub, expression());
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
        add_kid(attr, std::move(a));
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
      add_kid(kw, expression());
      return kw;
    }
    if (at_op("*")) fail_here("'*' arguments are not in the expression language");
    return expression();
  }

  Ast list_item() {
    if (at_op("*")) {
      const int column = next().column;
      Ast star = node(AstType::Star, column);
      add_kid(star, arith());
      return star;
    }
    return expression();
  }

  Ast atom() {
    const Token& t = peek();
    switch (t.type) {
      case TokenType::Int: {
        Ast a = node(AstType::Int, t.column);
        a.ival = t.ival;
        a.text = t.text;
        next();
        return a;
      }
      case TokenType::Float: {
        Ast a = node(AstType::Float, t.column);
        a.fval = t.fval;
        a.text = t.text;
        next();
        return a;
      }
      case TokenType::Str: {
        Ast a = node(AstType::Str, t.column);
        a.text = t.text;
        next();
        return a;
      }
      case TokenType::Name: {
        const Token name = next();
        if (name.text == "True" || name.text == "true" || name.text == "False" || name.text == "false") {
          Ast a = node(AstType::Bool, name.column);
          a.ival = (name.text == "True" || name.text == "true") ? 1 : 0;
          return a;
        }
        if (name.text == "None") return node(AstType::None, name.column);
        if (is_keyword(name.text)) fail_at(name.column, "unexpected keyword '" + name.text + "'");
        Ast a = node(AstType::Name, name.column);
        a.text = name.text;
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
    const Nest nest(*this);
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
    add_kid(tuple, std::move(first));
    while (at_op(",")) {
      next();
      if (at_op(")")) break;
      add_kid(tuple, expression());
    }
    expect_op(")");
    return tuple;
  }

  Ast list_display() {
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
