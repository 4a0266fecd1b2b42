// Shapes and strides: short integer vectors that live inline up to rank 6.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "tileops/export.hpp"

namespace tileops {

using Shape = boost::container::small_vector<std::int64_t, 6>;
using Strides = Shape;

// A read-only view of extents, made from a Shape, a std::vector, a span or a braced list.
class ShapeView : public std::span<const std::int64_t> {
 public:
  using std::span<const std::int64_t>::span;
  ShapeView(std::span<const std::int64_t> s) : std::span<const std::int64_t>(s) {}
  ShapeView(const Shape& s) : std::span<const std::int64_t>(s.data(), s.size()) {}
  ShapeView(const std::vector<std::int64_t>& v) : std::span<const std::int64_t>(v.data(), v.size()) {}
  ShapeView(std::initializer_list<std::int64_t> l) : std::span<const std::int64_t>(l.begin(), l.size()) {}
};

// Product of the extents; 1 for rank 0.
inline std::int64_t shape_numel(ShapeView shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

// Row-major strides, in elements.
TILEOPS_API Strides contiguous_strides(ShapeView shape);

// "[2, 3, 4]".
TILEOPS_API std::string shape_str(ShapeView shape);

// The broadcast of two shapes (NumPy rules: align trailing axes; extents equal or 1). Throws
// ValueError naming both shapes when they do not broadcast.
TILEOPS_API Shape broadcast_shapes(ShapeView a, ShapeView b);

// `axis` in [-rank, rank) mapped to [0, rank) (for rank 0, 0 and -1 both mean the scalar
// axis, 0). Throws ValueError naming the axis and the rank otherwise, and for a negative rank.
TILEOPS_API std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank);

}  // namespace tileops
