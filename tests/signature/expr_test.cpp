// The manifest expression language: precedence, arithmetic, comparisons, literals, Maybe,
// primitives, and the errors of each.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "signature/expression_eval.hpp"
#include "tileops/errors.hpp"

using tileops::Value;
using tileops::expr::Variable;
using tileops::expr::evaluate_expression;

namespace {

std::vector<Variable> variables() {
  return {
      {"M", "Dim", std::int64_t{6}},
      {"N", "Dim", std::int64_t{4}},
      {"S", "Shape", std::vector<std::int64_t>{2, 3, 4}},
      {"A", "Shape", std::vector<std::int64_t>{2048, 1}},
      {"B", "Shape", std::vector<std::int64_t>{4096}},
      {"E", "Shape", std::vector<std::int64_t>{}},
      {"T", "DType[float16 | bfloat16 | int32]", tileops::DType::bfloat16},
      {"I", "DType[int32 | int64]", tileops::DType::int32},
      {"dim", "int | list[int] | None", std::int64_t{-1}},
      {"dims", "int | list[int] | None", std::vector<std::int64_t>{0, 2}},
      {"none_dim", "int | list[int] | None", std::monostate{}},
      {"axis", "int", std::int64_t{-1}},
      {"keep", "bool", true},
      {"eps", "float | None", 1e-5},
      {"no_eps", "float | None", std::monostate{}},
      {"alpha", "int | float", 2.5},
      {"ialpha", "int | float", std::int64_t{3}},
      {"act", "'silu' | 'gelu'", std::string("gelu")},
      {"out_dtype", "float16 | bfloat16 | None", std::monostate{}},
      {"ks", "int | list[int] | None", std::vector<std::int64_t>{3, 5}},
  };
}

std::string eval(const std::string& source) { return tileops::value_str(evaluate_expression(source, variables())); }

struct Case {
  const char* source;
  const char* expected;
};

}  // namespace

TEST_CASE("expressions evaluate with Python semantics and precedence") {
  const Case cases[] = {
      {"1 + 2 * 3", "7"},
      {"(1 + 2) * 3", "9"},
      {"2 ** 3 ** 2", "512"},
      {"-2 ** 2", "-4"},
      {"7 // 2", "3"},
      {"-7 // 2", "-4"},
      {"7 // -2", "-4"},
      {"-7 % 3", "2"},
      {"7 % -3", "-2"},
      {"7 / 2", "3.5"},
      {"1.5 * 2", "3"},
      {"M * N + 1", "25"},
      {"2 * N - M", "2"},
      {"alpha * 2", "5"},
      {"ialpha * 2", "6"},
      {"1 < 2 < 3", "true"},
      {"3 > 2 > 2", "false"},
      {"-len(S) <= axis < len(S)", "true"},
      {"not keep", "false"},
      {"keep and M > 5", "true"},
      {"not keep or M > 100", "false"},
      {"M if keep else N", "6"},
      {"M in (1, 6, 9)", "true"},
      {"M not in (1, 6, 9)", "false"},
      {"4 in S", "true"},
      {"act in ('silu', 'gelu')", "true"},
      {"act == 'silu'", "false"},
      {"T == bfloat16", "true"},
      {"T == 'bfloat16'", "true"},
      {"True and true", "true"},
      {"False or false", "false"},
      {"'abc'", "'abc'"},
      {"\"dq\"", "'dq'"},
      {"1e-3 * 1000", "1"},
      {"S[0] + S[-1]", "6"},
      {"[M, *S, 1]", "[6, 2, 3, 4, 1]"},
      {"[*E]", "[]"},
      {"(M, N)", "[6, 4]"},
      {"present(eps) and eps.value > 0", "true"},
      {"not present(no_eps) or no_eps.value > 0", "true"},
      {"eps.value if present(eps) else 0.0", "1e-05"},
      {"prod(S)", "24"},
      {"prod(E)", "1"},
      {"sum(S)", "9"},
      {"len(S)", "3"},
      {"max(M, N)", "6"},
      {"min(S)", "2"},
      {"abs(-3)", "3"},
      {"broadcast(A, B)", "[2048, 4096]"},
      {"broadcast(E, S)", "[2, 3, 4]"},
      {"ceil_div(7, 2)", "4"},
      {"ceil_div(8, 2)", "4"},
      {"per_axis(ks, 1, 2)", "5"},
      {"per_axis(M, 1, 2)", "6"},
      {"per_axis(none_dim, 0, 2, fallback=N)", "4"},
      {"reduced(S, dim, False)", "[2, 3]"},
      {"reduced(S, dim, keep)", "[2, 3, 1]"},
      {"reduced(S, dims, False)", "[3]"},
      {"reduced(S, none_dim, False)", "[]"},
      {"reduced(S, none_dim, True)", "[1, 1, 1]"},
      {"reduced(E, 0, False)", "[]"},
      {"reduced(E, -1, True)", "[]"},
      {"normalize_axis(-1, 3)", "2"},
      {"normalize_axis(-1, 0)", "0"},
      {"valid_axes(dims, len(S))", "true"},
      {"valid_axes(3, len(S))", "false"},
      {"unique_axes([0, -3], 3)", "false"},
      {"unique_axes(dims, 3)", "true"},
      {"category(T)", "'float'"},
      {"category(I)", "'int'"},
      {"category(alpha)", "'float'"},
      {"category(ialpha)", "'int'"},
      {"category(keep)", "'bool'"},
      {"representable(ialpha, I)", "true"},
      {"representable(3000000000, int32)", "false"},
      {"representable(70000.0, float16)", "false"},
      {"representable(60000, float16)", "true"},
      {"representable(2.5, int64)", "false"},
      {"coalesce_dtype(out_dtype, T)", "bfloat16"},
      {"coalesce_dtype(float32, T)", "float32"},
      {"promote_int_to_float(I)", "float32"},
      {"promote_int_to_float(T)", "bfloat16"},
      {"sum_dtype(I)", "int64"},
      {"sum_dtype(T)", "bfloat16"},
      {"sum_dtype(bool)", "int64"},
      {"bits(T)", "16"},
      {"bits(float64) // 8", "8"},
  };
  for (const Case& c : cases) {
    const std::string source = c.source;
    CAPTURE(source);
    CHECK(eval(source) == c.expected);
  }
}

TEST_CASE("malformed, ill-kinded and undefined expressions raise ValueError naming the problem") {
  const Case cases[] = {
      {"1 +", "column 4: unexpected end of expression"},
      {"(1 + 2", "expected ')'"},
      {"M $ 2", "column 3: unexpected character '$'"},
      {"'abc", "unterminated string"},
      {"M is None", "'is' is not in the expression language"},
      {"lambda: 1", "lambda is not in the expression language"},
      {"[d for d in S]", "comprehensions are not in the expression language"},
      {"S[0:1]", "slices are not in the expression language"},
      {"99999999999999999999", "does not fit in 64 bits"},
      {"Q + 1", "unknown name 'Q'"},
      {"isinstance(M, int)", "unknown primitive 'isinstance'"},
      {"pool.out(M, 1, 1, 0, 1, False)", "unknown primitive 'pool.out'"},
      {"M.shape", "unknown attribute 'shape'"},
      {"prod(T)", "prod(): argument 1 must be Seq[Int], not DType"},
      {"len(M)", "len(): argument 1 must be Seq[Int], not Int"},
      {"ceil_div(M)", "ceil_div() takes 2 argument(s), got 1"},
      {"per_axis(ks, 0, 2, bogus=1)", "per_axis() has no argument named 'bogus'"},
      {"T + 1", "'+' needs numbers, but 'T' is DType"},
      {"eps > 0", "is Maybe[Float]; test present(...) and read .value"},
      {"eps.value > 0", "'.value' is read where present(eps) is not known to hold"},
      {"M.value", "'.value' applies to a Maybe, and 'M' is Int"},
      {"M == None", "comparing with None is not in the expression language"},
      {"T < bfloat16", "'<' orders numbers only"},
      {"M == T", "cannot compare Int with DType"},
      {"act == 'relu'", "'act == 'relu'': 'relu' is not a value of act ('silu' | 'gelu')"},
      {"T == float32", "'float32' is not a value of T (float16 | bfloat16 | int32)"},
      {"act in ('silu', 'tanh')", "'tanh' is not a value of act"},
      {"not M", "must be Bool, not Int"},
      {"M if N else 1", "must be Bool, not Int"},
      {"M if keep else T", "the two branches have different kinds"},
      {"[M, T]", "a shape or list item must be Int, not DType"},
      {"*S", "unexpected '*'"},
      {"present(M)", "present() takes an optional tensor or a parameter that may be None"},
      {"bytes(M)", "bytes() is allowed only in roofline formulas"},
      {"prod", "'prod' is a primitive; call it"},
  };
  for (const Case& c : cases) {
    const std::string source = c.source;
    CAPTURE(source);
    try {
      evaluate_expression(c.source, variables());
      FAIL("no error for " << c.source);
    } catch (const tileops::ValueError& e) {
      const std::string what = e.what();
      CAPTURE(what);
      CHECK(what.find(c.expected) != std::string::npos);
    }
  }
}

TEST_CASE("evaluation errors name the operation and the values") {
  const Case cases[] = {
      {"M // 0", "integer division by zero"},
      {"M % 0", "integer modulo by zero"},
      {"M / 0", "division by zero"},
      {"9223372036854775807 + 1", "integer overflow"},
      {"2 ** -1", "negative exponent"},
      {"S[3]", "index 3 is out of range for [2, 3, 4]"},
      {"no_eps.value if True else 0.0", "'.value' is read where present(no_eps) is not known to hold"},
      {"broadcast(S, [5])", "broadcast: shapes [2, 3, 4] and [5] are not broadcastable"},
      {"ceil_div(M, 0)", "ceil_div: the divisor must be positive, got 0"},
      {"normalize_axis(3, 3)", "axis 3 is out of range for rank 3"},
      {"reduced(S, 3, False)", "axis 3 is out of range for rank 3"},
      {"reduced(S, [1, -2], False)", "reduced: axis 1 appears twice in dim [1, -2]"},
      {"per_axis(ks, 0, 3)", "per_axis: expected 3 values, got [3, 5]"},
      {"per_axis(none_dim, 0, 2)", "per_axis: the value and its fallback are both None"},
      {"max(E)", "max: the sequence is empty"},
      {"prod([4294967296, 4294967296])", "prod: the product of [4294967296, 4294967296] overflows"},
  };
  for (const Case& c : cases) {
    const std::string source = c.source;
    CAPTURE(source);
    try {
      evaluate_expression(c.source, variables());
      FAIL("no error for " << c.source);
    } catch (const tileops::ValueError& e) {
      const std::string what = e.what();
      CAPTURE(what);
      CHECK(what.find(c.expected) != std::string::npos);
    }
  }
}
