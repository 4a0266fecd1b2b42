// Vf and Vd on any CPU, as GCC vector extensions of 16 bytes (SSE2 on x86-64, NEON on ARM);
// see vec_common.hpp.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "simd/vec_common.hpp"

namespace tileops::cpu {
namespace {

struct Vf {
  using R = float __attribute__((vector_size(16)));
  static constexpr int64_t width = 4;

  TILEOPS_VEC R zero() { return R{}; }
  TILEOPS_VEC R set1(float v) { return R{v, v, v, v}; }
  TILEOPS_VEC R iota() { return R{0, 1, 2, 3}; }

  template <class T>
  TILEOPS_VEC R load(const T* p) {
    if constexpr (std::is_same_v<T, float>) {
      R v{};
      std::memcpy(&v, p, sizeof v);
      return v;
    } else {
      R v{};
      for (int i = 0; i < width; ++i) v[i] = to_float(p[i]);
      return v;
    }
  }
  template <class T>
  TILEOPS_VEC R load_part(const T* p, int64_t count, float fill = 0.0f) {
    R v = set1(fill);
    for (int64_t i = 0; i < count; ++i) v[i] = to_float(p[i]);
    return v;
  }
  template <class T>
  TILEOPS_VEC void store(T* p, R v) {
    if constexpr (std::is_same_v<T, float>) {
      std::memcpy(p, &v, sizeof v);
    } else {
      for (int i = 0; i < width; ++i) p[i] = from_float<T>(v[i]);
    }
  }
  template <class T>
  TILEOPS_VEC void store_part(T* p, R v, int64_t count) {
    for (int64_t i = 0; i < count; ++i) p[i] = from_float<T>(v[i]);
  }
  template <class T>
  TILEOPS_VEC R loadn(const T* p, int64_t count, float fill = 0.0f) {
    return count == width ? load(p) : load_part(p, count, fill);
  }
  template <class T>
  TILEOPS_VEC void storen(T* p, R v, int64_t count) {
    if (count == width) {
      store(p, v);
    } else {
      store_part(p, v, count);
    }
  }

  TILEOPS_VEC R add(R a, R b) { return a + b; }
  TILEOPS_VEC R sub(R a, R b) { return a - b; }
  TILEOPS_VEC R mul(R a, R b) { return a * b; }
  TILEOPS_VEC R div(R a, R b) { return a / b; }
  TILEOPS_VEC R fma(R a, R b, R c) { return a * b + c; }
  // max and min return b when either operand is NaN, like the x86 paths.
  TILEOPS_VEC R max(R a, R b) { return a > b ? a : b; }
  TILEOPS_VEC R min(R a, R b) { return a < b ? a : b; }
  TILEOPS_VEC R sqrt(R a) {
    for (int i = 0; i < width; ++i) a[i] = std::sqrt(a[i]);
    return a;
  }
  // Below ln(FLT_MIN) 0, like the x86 paths, so that all of them agree on tiny results.
  TILEOPS_VEC R exp(R a) {
    for (int i = 0; i < width; ++i) a[i] = a[i] < -87.33654f ? 0.0f : std::exp(a[i]);
    return a;
  }

  TILEOPS_VEC float sum(R v) { return (v[0] + v[1]) + (v[2] + v[3]); }
  TILEOPS_VEC float max_of(R v) {
    const float a = v[0] > v[1] ? v[0] : v[1];
    const float b = v[2] > v[3] ? v[2] : v[3];
    return a > b ? a : b;
  }
  TILEOPS_VEC float prod(R v) { return (v[0] * v[1]) * (v[2] * v[3]); }
};

struct Vd {
  using R = double __attribute__((vector_size(16)));
  static constexpr int64_t width = 2;

  TILEOPS_VEC R zero() { return R{}; }
  TILEOPS_VEC R set1(double v) { return R{v, v}; }
  template <class T>
  TILEOPS_VEC R load(const T* p) {
    return R{static_cast<double>(to_float(p[0])), static_cast<double>(to_float(p[1]))};
  }
  TILEOPS_VEC R load(const double* p) { return R{p[0], p[1]}; }
  TILEOPS_VEC void store(double* p, R v) { std::memcpy(p, &v, sizeof v); }

  TILEOPS_VEC R add(R a, R b) { return a + b; }
  TILEOPS_VEC R mul(R a, R b) { return a * b; }
  TILEOPS_VEC double sum(R v) { return v[0] + v[1]; }
  TILEOPS_VEC double prod(R v) { return v[0] * v[1]; }
};

}  // namespace
}  // namespace tileops::cpu
