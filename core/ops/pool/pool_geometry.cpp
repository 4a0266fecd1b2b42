#include "pool/pool_geometry.hpp"

#include <string>

#include "tileops/errors.hpp"

namespace tileops::pool {

std::int64_t per_dim(const PerDim& value, int axis, std::string_view name) {
  if (const auto* one = std::get_if<std::int64_t>(&value)) return *one;
  const auto& list = std::get<std::vector<std::int64_t>>(value);
  if (list.size() != 2) {
    throw ValueError(std::string(name) + " must be an int or a list of 2 ints [height, width]: expected 2 values, got " +
                     std::to_string(list.size()));
  }
  return list[static_cast<std::size_t>(axis)];
}

std::int64_t output_size(std::int64_t size, std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                         std::int64_t dilation, bool ceil_mode) {
  const std::int64_t span = size + 2 * padding - dilation * (kernel - 1) - 1;
  const std::int64_t rounded = ceil_mode ? span + stride - 1 : span;
  // Floor division: span is negative when the window is wider than the padded input.
  std::int64_t count = rounded / stride - (rounded % stride != 0 && rounded < 0 ? 1 : 0) + 1;
  if (ceil_mode && (count - 1) * stride >= size + padding) --count;
  return count;
}

}  // namespace tileops::pool
