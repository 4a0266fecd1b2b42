// Vf and Vd on any x86-64 CPU, as GCC vector extensions of 16 bytes (SSE2 code);
// see vec_common.hpp.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>

#include "simd/vec_common.hpp"

namespace tileops::cpu {
namespace {

struct Vf {
  using R = float __attribute__((vector_size(16)));
  static constexpr int64_t width = 4;

  TILEOPS_VEC R zero() { return R{}; }
  TILEOPS_VEC R set1(float v) { return R{v, v, v, v}; }
  TILEOPS_VEC R iota() { return R{0, 1, 2, 3}; }

  using U16 = std::uint16_t __attribute__((vector_size(8)));
  using U32 = std::uint32_t __attribute__((vector_size(16)));

  TILEOPS_VEC U32 widen(const void* p) {
    U16 bits;
    std::memcpy(&bits, p, sizeof bits);
    return __builtin_convertvector(bits, U32);
  }
  TILEOPS_VEC R from_bits(U32 bits, const BFloat16*) { return std::bit_cast<R>(bits << 16); }
  // Half to float on integer lanes: the exponent and mantissa shifted into place and rescaled by
  // 2^112 (exact for normal and subnormal halves), infinity and NaN given the float exponent.
  TILEOPS_VEC R from_bits(U32 bits, const Half*) {
    const U32 magnitude = bits & 0x7fffu;
    const U32 scaled = std::bit_cast<U32>(std::bit_cast<R>(magnitude << 13) * 0x1p112f);
    const U32 special = (magnitude << 13) | 0x7f800000u;
    return std::bit_cast<R>((magnitude >= 0x7c00u ? special : scaled) | ((bits & 0x8000u) << 16));
  }

  // Vectors are built from memory with whole loads: filling them lane by lane compiles to small
  // stores and a wide reload, which stalls on store forwarding.
  template <class T>
  TILEOPS_VEC R load(const T* p) {
    if constexpr (std::is_same_v<T, float>) {
      R v;
      std::memcpy(&v, p, sizeof v);
      return v;
    } else if constexpr (std::is_same_v<T, double>) {
      using D = double __attribute__((vector_size(32)));
      D v;
      std::memcpy(&v, p, sizeof v);
      return __builtin_convertvector(v, R);
    } else {
      return from_bits(widen(p), p);
    }
  }
  template <class T>
  TILEOPS_VEC R load_part(const T* p, int64_t count, float fill = 0.0f) {
    T lanes[width];
    std::memcpy(lanes, p, static_cast<std::size_t>(count) * sizeof(T));
    const R v = load(static_cast<const T*>(lanes));
    const std::int32_t c = static_cast<std::int32_t>(count);
    return (std::int32_t __attribute__((vector_size(16)))){0, 1, 2, 3} < c ? v : set1(fill);
  }
  template <class T>
  TILEOPS_VEC void store(T* p, R v) {
    if constexpr (std::is_same_v<T, float>) {
      std::memcpy(p, &v, sizeof v);
    } else {
      const auto lanes = std::bit_cast<std::array<float, width>>(v);
      for (int i = 0; i < width; ++i) p[i] = from_float<T>(lanes[i]);
    }
  }
  template <class T>
  TILEOPS_VEC void store_part(T* p, R v, int64_t count) {
    const auto lanes = std::bit_cast<std::array<float, width>>(v);
    for (int64_t i = 0; i < count; ++i) p[i] = from_float<T>(lanes[i]);
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
  TILEOPS_VEC R fma(R a, R b, R c) { return a * b + c; }
  // max and min return b when either operand is NaN, like the x86 paths.
  TILEOPS_VEC R max(R a, R b) { return a > b ? a : b; }
  TILEOPS_VEC R min(R a, R b) { return a < b ? a : b; }
  TILEOPS_VEC R reciprocal(R d) { return set1(1.0f) / d; }
  // The algorithm and bounds of the AVX2 exp: below ln(FLT_MIN) 0, above ln(FLT_MAX) infinity.
  TILEOPS_VEC R exp(R x) {
    using I = std::int32_t __attribute__((vector_size(16)));
    const R lo = set1(-87.33654f);
    const R hi = set1(88.72283f);
    const I is_nan = x != x;
    const R xc = is_nan ? zero() : min(hi, max(lo, x));
    // Round to nearest through floor(t + 0.5): truncation, minus one where it went up.
    const R t = xc * 1.44269504088896341f + 0.5f;
    I k = __builtin_convertvector(t, I);
    k += __builtin_convertvector(k, R) > t;
    k = k > 127 ? 127 : k;
    const R fx = __builtin_convertvector(k, R);
    const R r = xc - fx * 0.693359375f - fx * -2.12194440e-4f;
    R p = set1(1.9875691500e-4f);
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + (r + 1.0f);
    R result = p * std::bit_cast<R>((k + 127) << 23);
    result = x < lo ? zero() : result;
    result = x > hi ? set1(std::numeric_limits<float>::infinity()) : result;
    return is_nan ? x : result;
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

  TILEOPS_VEC R set1(double v) { return R{v, v}; }
  template <class T>
  TILEOPS_VEC R load(const T* p) {
    return R{to_float(p[0]), to_float(p[1])};
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
