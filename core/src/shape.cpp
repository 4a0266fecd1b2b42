#include "tileops/shape.hpp"

#include <algorithm>

#include "tileops/errors.hpp"

namespace tileops {

void throw_bad_shape(ShapeView shape, std::string_view what, std::size_t element_bytes) {
  const std::string seen = std::string(what) + " has shape " + shape_str(shape);
  if (std::any_of(shape.begin(), shape.end(), [](std::int64_t d) { return d < 0; })) {
    throw ValueError(seen + ", which has a negative extent; extents are at least 0");
  }
  const bool zero = std::any_of(shape.begin(), shape.end(), [](std::int64_t d) { return d == 0; });
  const std::string extents = zero ? "its non-zero extents" : "its extents";
  const std::string limit = std::to_string(kMaxTensorBytes);
  if (!shape_fits(shape, 1) || element_bytes <= 1) {
    throw ValueError(seen + ": the product of " + extents + " exceeds " + limit + ", the most elements a tensor may span");
  }
  throw ValueError(seen + ": at " + std::to_string(element_bytes) + " bytes per element " + extents + " span more than " +
                   limit + " bytes, the most a tensor may span");
}

Strides contiguous_strides(ShapeView shape) {
  shape_numel(shape, "contiguous_strides: the tensor");
  Strides strides(shape.size());
  std::int64_t step = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = step;
    step *= shape[i] > 0 ? shape[i] : 1;
  }
  return strides;
}

std::string shape_str(ShapeView shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Shape broadcast_shapes(ShapeView a, ShapeView b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw ValueError("shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast: axis " +
                       std::to_string(i) + " has extents " + std::to_string(da) + " and " + std::to_string(db));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank) {
  if (rank < 0) throw ValueError("normalize_axis: rank " + std::to_string(rank) + " is negative");
  const std::int64_t lo = rank == 0 ? -1 : -rank;
  const std::int64_t hi = rank == 0 ? 1 : rank;
  if (axis < lo || axis >= hi) {
    throw ValueError("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank) +
                     " (expected [" + std::to_string(lo) + ", " + std::to_string(hi) + "))");
  }
  return axis < 0 ? axis + std::max<std::int64_t>(rank, 1) : axis;
}

}  // namespace tileops
