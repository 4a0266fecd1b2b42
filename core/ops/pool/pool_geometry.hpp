// The window geometry the pooling ops share: per-dimension values of the manifest's
// `int | list[int]` parameters and the output size rule of torch's pooling.
#pragma once

#include <cstdint>
#include <string_view>
#include <variant>
#include <vector>

namespace tileops::pool {

using PerDim = std::variant<std::int64_t, std::vector<std::int64_t>>;

// The value of `value` for spatial dimension `axis` (0: height, 1: width): the int itself, or
// the list's item. Throws ValueError naming `name` when a list does not hold exactly 2 values.
std::int64_t per_dim(const PerDim& value, int axis, std::string_view name);

// The number of windows along one dimension: floor (or, with ceil_mode, ceil) of
// (size + 2 * padding - dilation * (kernel - 1) - 1) / stride, plus 1; with ceil_mode, one less
// when the last window would start past the input and its left padding. Requires kernel,
// stride and dilation positive and the arithmetic within int64 (the signature check ran the
// same expression with overflow checks); may be 0 or negative for a too small input.
std::int64_t output_size(std::int64_t size, std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                         std::int64_t dilation, bool ceil_mode);

}  // namespace tileops::pool
