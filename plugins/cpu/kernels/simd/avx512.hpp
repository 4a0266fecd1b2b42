// Vf and Vd on AVX-512 (F, BW, VL, DQ); see vec_common.hpp.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "simd/vec_common.hpp"

namespace tileops::cpu {
namespace {

struct Vf {
  using R = __m512;
  static constexpr int64_t width = 16;

  TILEOPS_VEC R zero() { return _mm512_setzero_ps(); }
  TILEOPS_VEC R set1(float v) { return _mm512_set1_ps(v); }
  TILEOPS_VEC R iota() {
    return _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  }

  TILEOPS_VEC __mmask16 mask(int64_t count) { return static_cast<__mmask16>((1u << count) - 1u); }
  TILEOPS_VEC R from_bf16(__m256i h) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  // Round to nearest even; NaN stays a quiet NaN.
  TILEOPS_VEC __m256i to_bf16(R v) {
    const __m512i bits = _mm512_castps_si512(v);
    const __m512i upper = _mm512_srli_epi32(bits, 16);
    const __m512i lsb = _mm512_and_si512(upper, _mm512_set1_epi32(1));
    __m512i rounded = _mm512_srli_epi32(
        _mm512_add_epi32(_mm512_add_epi32(bits, _mm512_set1_epi32(0x7fff)), lsb), 16);
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    rounded = _mm512_mask_mov_epi32(rounded, nan, _mm512_or_si512(upper, _mm512_set1_epi32(0x40)));
    return _mm512_cvtepi32_epi16(rounded);
  }
  TILEOPS_VEC __m256i to_half(R v) {
    return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }

  TILEOPS_VEC R load(const float* p) { return _mm512_loadu_ps(p); }
  TILEOPS_VEC R load(const Half* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  TILEOPS_VEC R load(const BFloat16* p) {
    return from_bf16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  TILEOPS_VEC R load(const double* p) {
    const __m256 lo = _mm512_cvtpd_ps(_mm512_loadu_pd(p));
    const __m256 hi = _mm512_cvtpd_ps(_mm512_loadu_pd(p + 8));
    return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
  }

  TILEOPS_VEC R load_part(const float* p, int64_t count, float fill = 0.0f) {
    return _mm512_mask_loadu_ps(set1(fill), mask(count), p);
  }
  TILEOPS_VEC R load_part(const Half* p, int64_t count, float fill = 0.0f) {
    return _mm512_mask_mov_ps(set1(fill), mask(count),
                              _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask(count), p)));
  }
  TILEOPS_VEC R load_part(const BFloat16* p, int64_t count, float fill = 0.0f) {
    return _mm512_mask_mov_ps(set1(fill), mask(count),
                              from_bf16(_mm256_maskz_loadu_epi16(mask(count), p)));
  }

  TILEOPS_VEC void store(float* p, R v) { _mm512_storeu_ps(p, v); }
  TILEOPS_VEC void store(Half* p, R v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), to_half(v));
  }
  TILEOPS_VEC void store(BFloat16* p, R v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), to_bf16(v));
  }
  TILEOPS_VEC void store_part(float* p, R v, int64_t count) {
    _mm512_mask_storeu_ps(p, mask(count), v);
  }
  TILEOPS_VEC void store_part(Half* p, R v, int64_t count) {
    _mm256_mask_storeu_epi16(p, mask(count), to_half(v));
  }
  TILEOPS_VEC void store_part(BFloat16* p, R v, int64_t count) {
    _mm256_mask_storeu_epi16(p, mask(count), to_bf16(v));
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

  TILEOPS_VEC R add(R a, R b) { return _mm512_add_ps(a, b); }
  TILEOPS_VEC R sub(R a, R b) { return _mm512_sub_ps(a, b); }
  TILEOPS_VEC R mul(R a, R b) { return _mm512_mul_ps(a, b); }
  TILEOPS_VEC R fma(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
  // max and min return b when either operand is NaN, as the x86 instructions do.
  TILEOPS_VEC R max(R a, R b) { return _mm512_max_ps(a, b); }
  TILEOPS_VEC R min(R a, R b) { return _mm512_min_ps(a, b); }
  // 1 / d to about 1 ulp: a 14-bit estimate and one Newton step; d must be finite and normal.
  TILEOPS_VEC R reciprocal(R d) {
    const R r = _mm512_rcp14_ps(d);
    return mul(r, _mm512_fnmadd_ps(d, r, set1(2.0f)));
  }

  TILEOPS_VEC float sum(R v) { return _mm512_reduce_add_ps(v); }
  TILEOPS_VEC float max_of(R v) { return _mm512_reduce_max_ps(v); }
  TILEOPS_VEC float prod(R v) { return _mm512_reduce_mul_ps(v); }

  // exp with a relative error of a few ulp: 2^round(x log2 e) times a degree-7 polynomial of the
  // remainder, scaled by vscalefps, which underflows to 0 and overflows to infinity exactly as
  // exp does; NaN stays NaN.
  TILEOPS_VEC R exp(R x) {
    const R xc = min(set1(88.8f), max(set1(-110.0f), x));
    const R fx = _mm512_roundscale_ps(mul(xc, set1(1.44269504088896341f)),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    R r = _mm512_fnmadd_ps(fx, set1(0.693359375f), xc);
    r = _mm512_fnmadd_ps(fx, set1(-2.12194440e-4f), r);
    R p = set1(1.9875691500e-4f);
    p = fma(p, r, set1(1.3981999507e-3f));
    p = fma(p, r, set1(8.3334519073e-3f));
    p = fma(p, r, set1(4.1665795894e-2f));
    p = fma(p, r, set1(1.6666665459e-1f));
    p = fma(p, r, set1(5.0000001201e-1f));
    p = fma(p, mul(r, r), add(r, set1(1.0f)));
    return _mm512_scalef_ps(p, fx);
  }
};

struct Vd {
  using R = __m512d;
  static constexpr int64_t width = 8;

  TILEOPS_VEC R set1(double v) { return _mm512_set1_pd(v); }

  TILEOPS_VEC R load(const double* p) { return _mm512_loadu_pd(p); }
  TILEOPS_VEC R load(const float* p) { return _mm512_cvtps_pd(_mm256_loadu_ps(p)); }
  TILEOPS_VEC R load(const Half* p) {
    return _mm512_cvtps_pd(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  TILEOPS_VEC R load(const BFloat16* p) {
    const __m256i wide =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm512_cvtps_pd(_mm256_castsi256_ps(_mm256_slli_epi32(wide, 16)));
  }
  TILEOPS_VEC void store(double* p, R v) { _mm512_storeu_pd(p, v); }

  TILEOPS_VEC R add(R a, R b) { return _mm512_add_pd(a, b); }
  TILEOPS_VEC R mul(R a, R b) { return _mm512_mul_pd(a, b); }
  TILEOPS_VEC double sum(R v) { return _mm512_reduce_add_pd(v); }
  TILEOPS_VEC double prod(R v) { return _mm512_reduce_mul_pd(v); }
};

}  // namespace
}  // namespace tileops::cpu
