#include "signature/expr/lexer.hpp"

#include <cctype>
#include <charconv>
#include <cstdlib>

#include "signature/expr/ast.hpp"
#include "tileops/errors.hpp"

namespace tileops::expr {
namespace {

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

[[noreturn]] void fail(std::size_t pos, const std::string& what) {
  throw ValueError("column " + std::to_string(pos + 1) + ": " + what);
}

// Operators, longest first so that "//" wins over "/".
constexpr std::string_view kOperators[] = {"**", "//", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%",
                                           "<",  ">",  "(",  ")",  "[",  "]",  ",", ".", "=", ":", "|"};

}  // namespace

std::vector<Token> tokenize(std::string_view s) {
  if (s.size() > kMaxExpressionLength) {
    throw ValueError("the expression is " + std::to_string(s.size()) + " characters long; the limit is " +
                     std::to_string(kMaxExpressionLength));
  }
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    Token t;
    t.column = static_cast<int>(i) + 1;
    if (is_name_start(c)) {
      std::size_t j = i;
      while (j < s.size() && is_name_char(s[j])) ++j;
      t.type = TokenType::Name;
      t.text = std::string(s.substr(i, j - i));
      i = j;
    } else if (is_digit(c) || (c == '.' && i + 1 < s.size() && is_digit(s[i + 1]))) {
      std::size_t j = i;
      bool is_float = false;
      while (j < s.size() && (is_digit(s[j]) || s[j] == '_')) ++j;
      if (j < s.size() && s[j] == '.') {
        is_float = true;
        ++j;
        while (j < s.size() && is_digit(s[j])) ++j;
      }
      if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
        std::size_t k = j + 1;
        if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
        if (k < s.size() && is_digit(s[k])) {
          is_float = true;
          j = k;
          while (j < s.size() && is_digit(s[j])) ++j;
        }
      }
      if (j < s.size() && is_name_char(s[j])) fail(j, "malformed number '" + std::string(s.substr(i, j - i + 1)) + "'");
      std::string digits;
      for (std::size_t k = i; k < j; ++k) {
        if (s[k] != '_') digits += s[k];
      }
      if (is_float) {
        t.type = TokenType::Float;
        t.fval = std::strtod(digits.c_str(), nullptr);
      } else {
        t.type = TokenType::Int;
        const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), t.ival);
        if (r.ec != std::errc()) fail(i, "integer literal " + digits + " does not fit in 64 bits");
      }
      t.text = std::string(s.substr(i, j - i));
      i = j;
    } else if (c == '\'' || c == '"') {
      std::size_t j = i + 1;
      while (j < s.size() && s[j] != c) ++j;
      if (j >= s.size()) fail(i, "unterminated string");
      t.type = TokenType::Str;
      t.text = std::string(s.substr(i + 1, j - i - 1));
      i = j + 1;
    } else {
      bool matched = false;
      for (std::string_view op : kOperators) {
        if (s.substr(i, op.size()) == op) {
          t.type = TokenType::Op;
          t.text = std::string(op);
          i += op.size();
          matched = true;
          break;
        }
      }
      if (!matched) fail(i, std::string("unexpected character '") + c + "'");
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.column = static_cast<int>(s.size()) + 1;
  out.push_back(end);
  return out;
}

}  // namespace tileops::expr
