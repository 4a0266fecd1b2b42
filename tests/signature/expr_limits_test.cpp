// Hostile expressions: nesting beyond the documented limit is a clear ValueError (never a stack
// overflow), long flat runs parse and evaluate in linear time, and every integer primitive
// reports overflow instead of wrapping or invoking undefined behaviour.
#include <doctest/doctest.h>

#include <pthread.h>

#include <string>
#include <vector>

#include "tileops/errors.hpp"
#include "signature/expr/ast.hpp"
#include "signature/expression_eval.hpp"
#include "signature/signature_plan.hpp"
#include "tileops/errors.hpp"

using tileops::ValueError;
using tileops::expr::Variable;
using tileops::expr::evaluate_expression;
using tileops::expr::kMaxExpressionDepth;

namespace {

std::vector<Variable> variables() {
  return {
      {"M", "Dim", std::int64_t{6}},
      {"keep", "bool", true},
      {"eps", "float | None", 1e-5},
  };
}

std::string eval(const std::string& source) { return tileops::value_str(evaluate_expression(source, variables())); }

std::string repeat(const std::string& s, int n) {
  std::string out;
  out.reserve(s.size() * static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

std::string nested_parens(int n) { return repeat("(", n) + "M" + repeat(")", n); }

const std::string kTooDeep = "nests more than 128 levels deep";

// The thread stack the deepest expressions must fit in: 1 MiB, or 8 MiB (the size of a main
// thread's stack) under AddressSanitizer, whose redzones around every local make each of the
// parser's frames several times larger.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kStackBytes = std::size_t{8} << 20;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr std::size_t kStackBytes = std::size_t{8} << 20;
#else
constexpr std::size_t kStackBytes = std::size_t{1} << 20;
#endif
#else
constexpr std::size_t kStackBytes = std::size_t{1} << 20;
#endif

}  // namespace

TEST_CASE("nesting deeper than kMaxExpressionDepth is a ValueError, the limit itself is accepted") {
  REQUIRE(kMaxExpressionDepth == 128);
  CHECK(eval(nested_parens(kMaxExpressionDepth)) == "6");
  CHECK(eval(repeat("-", kMaxExpressionDepth) + "M") == "6");
  CHECK(eval(repeat("not ", kMaxExpressionDepth) + "keep") == "true");
  CHECK_THROWS_WITH_AS(eval(nested_parens(kMaxExpressionDepth + 1)), doctest::Contains(kTooDeep.c_str()), ValueError);
  CHECK_THROWS_WITH_AS(eval(repeat("-", kMaxExpressionDepth + 1) + "M"), doctest::Contains(kTooDeep.c_str()), ValueError);
}

TEST_CASE("the deepest expressions allowed parse, compile and evaluate on a thread with a 1 MiB stack (8 MiB under ASan)") {
  const int n = kMaxExpressionDepth;
  struct Job {
    std::vector<std::pair<std::string, std::string>> cases;  // source, expected value
    std::vector<std::string> results;
  } job;
  job.cases = {
      {nested_parens(n), "6"},
      {repeat("-", n) + "M", "6"},
      {repeat("not ", n) + "keep", "true"},
      {repeat("abs(", n) + "M" + repeat(")", n), "6"},
      {repeat("M if keep else ", n) + "0", "6"},
      {repeat("1 ** ", n) + "1", "1"},
      {repeat("(-", n / 2) + "M" + repeat(")", n / 2), "6"},
  };
  const auto body = [](void* arg) -> void* {
    auto* j = static_cast<Job*>(arg);
    for (const auto& [source, expected] : j->cases) {
      try {
        j->results.push_back(eval(source));
      } catch (const std::exception& e) {
        j->results.push_back(e.what());
      }
    }
    return nullptr;
  };
  pthread_attr_t attr;
  REQUIRE(pthread_attr_init(&attr) == 0);
  REQUIRE(pthread_attr_setstacksize(&attr, kStackBytes) == 0);
  pthread_t thread;
  REQUIRE(pthread_create(&thread, &attr, body, &job) == 0);
  REQUIRE(pthread_join(thread, nullptr) == 0);
  pthread_attr_destroy(&attr);
  REQUIRE(job.results.size() == job.cases.size());
  for (std::size_t i = 0; i < job.cases.size(); ++i) {
    CAPTURE(job.cases[i].first.substr(0, 40));
    CHECK(job.results[i] == job.cases[i].second);
  }
}

TEST_CASE("the inputs that overflowed the stack are refused with the nesting error") {
  const std::vector<std::pair<const char*, std::string>> cases = {
      {"5,000 nested parentheses", nested_parens(5000)},
      {"5,000 nested if/else", repeat("M if keep else ", 5000) + "0"},
      {"20,000 unary minuses", repeat("-", 20000) + "M"},
      {"20,000 unary pluses", repeat("+", 20000) + "M"},
      {"20,000 nots", repeat("not ", 20000) + "keep"},
      {"5,000 nested lists", repeat("[", 5000) + repeat("]", 5000)},
      {"5,000 nested calls", repeat("abs(", 5000) + "M" + repeat(")", 5000)},
      {"5,000 chained calls", "abs(M)" + repeat("(1)", 5000)},
      {"5,000 chained subscripts", "[M]" + repeat("[0]", 5000)},
      {"20,000 attribute reads", "eps" + repeat(".value", 20000)},
      {"5,000 right-nested powers", repeat("1 ** ", 5000) + "1"},
      {"5,000 nested stars", repeat("[*", 5000) + "[M]" + repeat("]", 5000)},
  };
  for (const auto& [what, source] : cases) {
    CAPTURE(what);
    CHECK_THROWS_WITH_AS(eval(source), doctest::Contains(kTooDeep.c_str()), ValueError);
  }
}

TEST_CASE("a long flat run is one level, parsed and evaluated in linear time") {
  // 20,000 terms: with the former quadratic copying this case alone took over a minute.
  CHECK(eval("M" + repeat(" + M", 19999)) == "120000");
  CHECK(eval("1" + repeat(" + 1", 5999)) == "6000");
  CHECK(eval("M" + repeat(" - 1", 19999)) == "-19993");
  CHECK(eval("M" + repeat(" * 1", 19999)) == "6");
  CHECK(eval("1" + repeat(" < 2", 19999)) == "false");
  CHECK(eval("keep" + repeat(" and keep", 19999)) == "true");
  CHECK(eval("[" + repeat("M, ", 19999) + "M][19999]") == "6");
}

TEST_CASE("a chain folds left to right with the checked integer operations") {
  CHECK(eval("9223372036854775807 - 1 + 1") == "9223372036854775807");
  CHECK_THROWS_WITH_AS(eval("9223372036854775807 + 1 - 1"), doctest::Contains("integer overflow"), ValueError);
  CHECK(eval("7 // 2 * 2") == "6");
  CHECK(eval("1 + 2 / 4") == "1.5");
  CHECK(eval("2 * 3 ** 2") == "18");
}

TEST_CASE("an expression longer than kMaxExpressionLength is refused before it is read") {
  const std::string huge(tileops::expr::kMaxExpressionLength + 1, ' ');
  CHECK_THROWS_WITH_AS(eval(huge), doctest::Contains("characters long; the limit is 1048576"), ValueError);
}

TEST_CASE("every integer primitive and operator reports overflow, never wraps") {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"sum([9223372036854775807, 1])", "sum: the sum of [9223372036854775807, 1] overflows"},
      {"sum([-9223372036854775807, -2])", "sum: the sum of [-9223372036854775807, -2] overflows"},
      {"abs(-9223372036854775807 - 1)", "abs: |-9223372036854775808| overflows a 64-bit integer"},
      {"normalize_axis(0, -9223372036854775807 - 1)", "normalize_axis: rank -9223372036854775808 is negative"},
      {"normalize_axis(-9223372036854775807 - 1, 3)", "axis -9223372036854775808 is out of range for rank 3"},
      {"valid_axes(0, -1) or unique_axes([0], -1)", "normalize_axis: rank -1 is negative"},
      {"(-9223372036854775807 - 1) // -1", "integer overflow"},
      {"-(-9223372036854775807 - 1)", "integer overflow"},
      {"prod([-9223372036854775807 - 1, -1])", "prod: the product of [-9223372036854775808, -1] overflows"},
      {"2 ** 63", "integer overflow"},
      {"(-2) ** 64", "integer overflow"},
      {"3037000500 * 3037000500", "integer overflow"},
      {"M << 2", "unexpected '<'"},
      {"M >> 2", "unexpected '>'"},
  };
  for (const auto& [source, expected] : cases) {
    CAPTURE(source);
    CHECK_THROWS_WITH_AS(eval(source), doctest::Contains(expected), ValueError);
  }
}

TEST_CASE("the edges of the integer primitives give exact results") {
  CHECK(eval("(-9223372036854775807 - 1) % -1") == "0");
  CHECK(eval("(-9223372036854775807 - 1) // 1") == "-9223372036854775808");
  CHECK(eval("normalize_axis(-1, 9223372036854775807)") == "9223372036854775806");
  CHECK(eval("normalize_axis(9223372036854775806, 9223372036854775807)") == "9223372036854775806");
  CHECK(eval("abs(-9223372036854775807)") == "9223372036854775807");
  CHECK(eval("sum([9223372036854775807, -1, 1])") == "9223372036854775807");
  CHECK(eval("ceil_div(-9223372036854775807 - 1, 9223372036854775807)") == "-1");
  CHECK(eval("ceil_div(9223372036854775807, 1)") == "9223372036854775807");
  CHECK(eval("valid_axes(0, -1)") == "false");
}

TEST_CASE("a power with a huge exponent finishes at once (bases 0, 1 and -1 never overflow)") {
  CHECK(eval("1 ** 9223372036854775807") == "1");
  CHECK(eval("(-1) ** 9223372036854775807") == "-1");
  CHECK(eval("(-1) ** 9223372036854775806") == "1");
  CHECK(eval("0 ** 9223372036854775807") == "0");
  CHECK(eval("0 ** 0") == "1");
  CHECK_THROWS_WITH_AS(eval("2 ** 9223372036854775807"), doctest::Contains("integer overflow"), ValueError);
}

TEST_CASE("a manifest expression nested too deeply names file, op and field") {
  const std::string yaml = R"yaml(
DeepFwdOp:
  family: test
  status: spec-only
  signature:
    forall: {M: Dim}
    inputs:
      x: {dtype: float32, shape: "[M]"}
    outputs:
      y: {dtype: float32, shape: "[M]"}
    shape_rules:
    - ")yaml" + repeat("-", 5000) + R"yaml(M < 0"
  workloads:
  - {M: 4, label: unit}
  roofline:
    flops: "M"
)yaml";
  CHECK_THROWS_WITH_AS(tileops::SignaturePlan::from_yaml(yaml, "DeepFwdOp", "deep.yaml"),
                       doctest::Contains("deep.yaml: DeepFwdOp: signature.shape_rules[0]:"),
                       tileops::ManifestError);
  CHECK_THROWS_WITH_AS(tileops::SignaturePlan::from_yaml(yaml, "DeepFwdOp", "deep.yaml"), doctest::Contains(kTooDeep.c_str()),
                       tileops::ManifestError);
}

TEST_CASE("type family arguments substituted past the nesting limit name the shape") {
  const std::string deep = repeat("-", 100) + "M";
  const std::string yaml = std::string(R"yaml(
FamFwdOp:
  family: test
  status: spec-only
  signature:
    types:
      Vec:
        params: {t: Bool, R: Dim}
        match: t
        cases:
        - {when: false, is: ")yaml") + "[" + repeat("-", 100) + "R]" + R"yaml("}
        - {when: true, is: "[R]"}
    forall: {M: Dim}
    params:
      t: {type: bool, default: false}
    inputs:
      x: {dtype: float32, shape: "[M]"}
    outputs:
      y: {dtype: float32, shape: "Vec[t, )yaml" + deep + R"yaml(]"}
  workloads:
  - {M: 4, label: unit}
  roofline:
    flops: "M"
)yaml";
  CHECK_THROWS_WITH_AS(tileops::SignaturePlan::from_yaml(yaml, "FamFwdOp", "fam.yaml"),
                       doctest::Contains("fam.yaml: FamFwdOp: signature.outputs.y.shape:"),
                       tileops::ManifestError);
  CHECK_THROWS_WITH_AS(tileops::SignaturePlan::from_yaml(yaml, "FamFwdOp", "fam.yaml"), doctest::Contains(kTooDeep.c_str()),
                       tileops::ManifestError);
}
