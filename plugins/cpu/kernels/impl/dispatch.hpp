// Dtype to storage type dispatch inside an instruction-set region.
#pragma once

#include "kernel_table.hpp"
#include "simd/vec_common.hpp"

namespace tileops::cpu {
namespace {

// Calls f.template operator()<T>() with T the storage type of a float32, float16 or bfloat16
// dtype.
template <class F>
void with_float_type(const char* kernel, DType dtype, F&& f) {
  switch (dtype) {
    case DType::float32:
      f.template operator()<float>();
      return;
    case DType::float16:
      f.template operator()<Half>();
      return;
    case DType::bfloat16:
      f.template operator()<BFloat16>();
      return;
    default:
      unsupported_dtype(kernel, dtype);
  }
}

// The number of lanes of vector V left from position j of a row of n, at most V::width.
template <class V>
[[gnu::always_inline]] inline int64_t lanes_left(int64_t j, int64_t n) {
  return n - j < V::width ? n - j : V::width;
}

// Calls body(j, lanes) for j = begin, begin + W, ... below end, with lanes = W (a constant, so
// that loadn and storen become plain full loads and stores) but for a last partial vector.
template <class Body>
[[gnu::always_inline]] inline void for_each_vector(int64_t begin, int64_t end, Body&& body) {
  constexpr int64_t W = Vf::width;
  int64_t j = begin;
  for (; j + 2 * W <= end; j += 2 * W) {
    body(j, W);
    body(j + W, W);
  }
  if (j + W <= end) {
    body(j, W);
    j += W;
  }
  if (j < end) body(j, end - j);
}

}  // namespace
}  // namespace tileops::cpu
