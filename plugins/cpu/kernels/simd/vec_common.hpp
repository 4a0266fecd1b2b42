// What the vector headers share. A vector header defines, for one instruction set, Vf (float32
// lanes) with the static members
//   width; zero(); set1(v); iota() (0, 1, ... width - 1);
//   load(p) / store(p, v) for a full vector and load_part(p, count, fill) / store_part(p, v,
//   count) for the first count < width lanes, converting from and to float, Half and BFloat16
//   (load also from double); loadn / storen, which pick one of the two by count;
//   add, sub, mul, fma(a, b, c) = a * b + c, max, min, reciprocal, exp;
//   sum, prod, max_of: the horizontal reductions;
// and Vd (float64 lanes) with width, set1, load (from double, float, Half, BFloat16), store,
// add, mul, sum and prod.
// A vector header is included only inside the target region of its isa_*.cpp file, so that all
// its code is compiled for that instruction set and has internal linkage there.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tileops/half.hpp"

#define TILEOPS_VEC [[gnu::always_inline]] static inline

namespace tileops::cpu {
namespace {

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Scalar conversions between the storage types and float.
template <class T>
[[gnu::always_inline]] inline float to_float(T v) {
  if constexpr (is_half_v<T>) {
    return T::to_float(v.bits);
  } else {
    return static_cast<float>(v);
  }
}

template <class T>
[[gnu::always_inline]] inline T from_float(float v) {
  if constexpr (is_half_v<T>) {
    return T::from_bits(T::from_float(v));
  } else {
    return static_cast<T>(v);
  }
}

}  // namespace
}  // namespace tileops::cpu
