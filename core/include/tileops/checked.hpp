// Checked arithmetic on sizes. Every product or sum of extents, strides, element counts or byte
// counts that comes from outside data (shapes, parameters, files) goes through these, so that a
// size that does not fit fails with a ValueError instead of wrapping around.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

#include "tileops/export.hpp"

namespace tileops {

// The most elements, and the most bytes, one tensor may span: what a signed 64-bit offset
// addresses.
inline constexpr std::int64_t kMaxTensorBytes = std::numeric_limits<std::int64_t>::max();

// a * b, a + b: false (and `out` unspecified) when the exact result does not fit in int64_t.
[[nodiscard]] inline bool mul_fits(std::int64_t a, std::int64_t b, std::int64_t& out) noexcept {
  return !__builtin_mul_overflow(a, b, &out);
}
[[nodiscard]] inline bool add_fits(std::int64_t a, std::int64_t b, std::int64_t& out) noexcept {
  return !__builtin_add_overflow(a, b, &out);
}

// Throws ValueError: "<what>: <a> <op> <b> does not fit in a signed 64-bit integer (limit
// 9223372036854775807)".
[[noreturn]] TILEOPS_API void throw_size_overflow(std::string_view what, std::int64_t a, char op, std::int64_t b);

// a * b and a + b, or ValueError naming `what` (e.g. "GemmFwdOp: flops") and the limit.
inline std::int64_t checked_mul(std::int64_t a, std::int64_t b, std::string_view what) {
  std::int64_t r;
  if (!mul_fits(a, b, r)) throw_size_overflow(what, a, '*', b);
  return r;
}
inline std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view what) {
  std::int64_t r;
  if (!add_fits(a, b, r)) throw_size_overflow(what, a, '+', b);
  return r;
}

}  // namespace tileops
