// The built-in primitives manifest expressions may call. The set is closed: an expression
// calling anything else does not compile. `present(x)` and `bytes(t)` take names rather than
// values and are compiled directly (see compiler.cpp).
#pragma once

#include <array>
#include <span>
#include <string_view>

#include "signature/expr/kind.hpp"
#include "signature/expr/val.hpp"

namespace tileops::expr {

struct Primitive {
  std::string_view name;
  int min_args = 0;
  int max_args = 0;  // -1: any number from min_args
  // Names of the optional arguments at positions min_args, min_args + 1, ..., which a call may
  // also pass by keyword (e.g. per_axis's `fallback`).
  std::array<std::string_view, 2> keywords{};
  // The result kind for these argument kinds; throws ValueError naming the argument that has
  // the wrong kind. An omitted optional argument has kind None.
  Kind (*check)(std::span<const Kind> args) = nullptr;
  // The result; throws ValueError naming the primitive and the value outside its domain. An
  // omitted optional argument is an unset Val.
  Val (*eval)(std::span<const Val> args) = nullptr;
};

// The id of primitive `name`, or -1.
int find_primitive(std::string_view name);
const Primitive& primitive(int id);
// Every primitive name, for messages.
std::string primitive_names();

// The axis `axis` of a rank-`rank` shape as an index in [0, rank): at rank 0, 0 and -1 name the
// scalar axis (index 0); otherwise axis must lie in [-rank, rank). Throws ValueError otherwise,
// and for a negative rank.
std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank);

}  // namespace tileops::expr
