#include "tileops/shape.hpp"

namespace tileops {

Strides contiguous_strides(ShapeView shape) {
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

}  // namespace tileops
