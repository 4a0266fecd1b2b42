// The manifest expression language: the input is one expression, parsed, compiled and evaluated
// against one of three frames of the same names (small, zero or extreme values; the input's
// length picks which, so that each input always meets the same one). Any tileops::Error is a
// refusal; anything else (a crash, a sanitizer report, another exception) is a finding.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "signature/expression_eval.hpp"
#include "tileops/errors.hpp"

namespace {

using tileops::expr::Variable;

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

std::vector<Variable> frame(std::int64_t m, std::int64_t n, std::vector<std::int64_t> s, double eps) {
  return {
      {"M", "Dim", m},
      {"N", "Dim", n},
      {"S", "Shape", s},
      {"E", "Shape", std::vector<std::int64_t>{}},
      {"A", "Shape", std::vector<std::int64_t>{m, 1}},
      {"B", "Shape", std::vector<std::int64_t>{n}},
      {"T", "DType[float16 | bfloat16 | int32]", tileops::DType::bfloat16},
      {"I", "DType[int32 | int64]", tileops::DType::int32},
      {"ks", "int | list[int] | None", std::vector<std::int64_t>{3, 5}},
      {"dim", "int | list[int] | None", std::int64_t{-1}},
      {"dims", "int | list[int] | None", s},
      {"none_dim", "int | list[int] | None", std::monostate{}},
      {"keep", "bool", true},
      {"eps", "float | None", eps},
      {"no_eps", "float | None", std::monostate{}},
      {"alpha", "int | float", eps},
      {"ialpha", "int | float", m},
      {"act", "'silu' | 'gelu'", std::string("gelu")},
      {"out_dtype", "float16 | bfloat16 | None", std::monostate{}},
  };
}

const std::vector<std::vector<Variable>>& frames() {
  static const std::vector<std::vector<Variable>> f = {
      frame(6, 4, {2, 3, 4}, 1e-5),
      frame(0, 0, {0}, 0.0),
      frame(kMax, kMin, {kMax, kMin, -1, 0}, std::numeric_limits<double>::infinity()),
  };
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  try {
    tileops::expr::evaluate_expression(source, frames()[size % frames().size()]);
  } catch (const tileops::Error&) {
  }
  return 0;
}
