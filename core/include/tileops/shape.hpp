// Shapes and strides: short integer vectors that live inline up to rank 6.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "tileops/checked.hpp"
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

// Throws ValueError: "<what> has shape [..]" and why it cannot be a tensor's (a negative
// extent; more elements, or with `element_bytes` > 0 more bytes, than the limit kMaxTensorBytes).
[[noreturn]] TILEOPS_API void throw_bad_shape(ShapeView shape, std::string_view what, std::size_t element_bytes = 0);

// The product of the extents; 1 for rank 0. Throws ValueError naming `what` (e.g. "input 'x'")
// and the limit when an extent is negative or when the product of the extents, a zero counted
// as one, exceeds kMaxTensorBytes: every partial product of an accepted shape (a contiguous
// stride, a row count) fits as well.
inline std::int64_t shape_numel(ShapeView shape, std::string_view what = "a tensor") {
  std::int64_t span = 1;
  bool bad = false;
  bool zero = false;
  for (std::int64_t d : shape) {
    bad |= d < 0;
    zero |= d == 0;
    bad |= !mul_fits(span, d > 1 ? d : 1, span);
  }
  if (bad) throw_bad_shape(shape, what);
  return zero ? 0 : span;
}

// True when shape_nbytes(shape, element_bytes) would return rather than throw.
inline bool shape_fits(ShapeView shape, std::size_t element_bytes) noexcept {
  std::int64_t span = 1;
  bool fits = true;
  for (std::int64_t d : shape) fits = fits && d >= 0 && mul_fits(span, d > 1 ? d : 1, span);
  return fits && mul_fits(span, static_cast<std::int64_t>(element_bytes), span);
}

// shape_numel(shape) * element_bytes, checked the same way (a zero extent counted as one, so
// that every byte stride fits too): throws ValueError naming `what` and the limit beyond
// kMaxTensorBytes.
inline std::int64_t shape_nbytes(ShapeView shape, std::size_t element_bytes, std::string_view what = "a tensor") {
  if (!shape_fits(shape, element_bytes)) throw_bad_shape(shape, what, element_bytes);
  return shape_numel(shape, what) * static_cast<std::int64_t>(element_bytes);
}

// Row-major strides, in elements. Throws like shape_numel for a shape no tensor can have.
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
