// Splits one manifest expression into tokens.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tileops::expr {

enum class TokenType : std::uint8_t { Name, Int, Float, Str, Op, End };

struct Token {
  TokenType type = TokenType::End;
  std::string text;     // the name, operator or string contents
  std::int64_t ival = 0;
  double fval = 0;
  int column = 0;       // 1-based
};

// Tokens of `source`, ending with an End token. Throws ValueError naming the column of a
// character that starts no token, an unterminated string or an integer literal that does not
// fit in 64 bits, and for a source longer than kMaxExpressionLength.
std::vector<Token> tokenize(std::string_view source);

}  // namespace tileops::expr
