// Vf and Vd on AVX2 with FMA and F16C; see vec_common.hpp.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <limits>

#include "simd/vec_common.hpp"

namespace tileops::cpu {
namespace {

struct Vf {
  using R = __m256;
  static constexpr int64_t width = 8;

  TILEOPS_VEC R zero() { return _mm256_setzero_ps(); }
  TILEOPS_VEC R set1(float v) { return _mm256_set1_ps(v); }
  TILEOPS_VEC R iota() { return _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7); }

  TILEOPS_VEC __m256i mask(int64_t count) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  TILEOPS_VEC R from_bf16(__m128i h) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  // Round to nearest even; NaN stays a quiet NaN.
  TILEOPS_VEC __m128i to_bf16(R v) {
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i upper = _mm256_srli_epi32(bits, 16);
    const __m256i lsb = _mm256_and_si256(upper, _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7fff)), lsb), 16);
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    const __m256i quiet = _mm256_or_si256(upper, _mm256_set1_epi32(0x40));
    const __m256i result = _mm256_blendv_epi8(rounded, quiet, nan);
    return _mm_packus_epi32(_mm256_castsi256_si128(result), _mm256_extracti128_si256(result, 1));
  }
  TILEOPS_VEC __m128i to_half(R v) {
    return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  TILEOPS_VEC __m128i load_bits(const void* p) {
    return _mm_loadu_si128(static_cast<const __m128i*>(p));
  }
  // The first count 16-bit values at p, the other lanes zero.
  TILEOPS_VEC __m128i load_bits_part(const void* p, int64_t count) {
    alignas(16) std::uint16_t buffer[8] = {};
    std::memcpy(buffer, p, static_cast<std::size_t>(count) * 2);
    return _mm_load_si128(reinterpret_cast<const __m128i*>(buffer));
  }
  TILEOPS_VEC void store_bits_part(void* p, __m128i bits, int64_t count) {
    alignas(16) std::uint16_t buffer[8];
    _mm_store_si128(reinterpret_cast<__m128i*>(buffer), bits);
    std::memcpy(p, buffer, static_cast<std::size_t>(count) * 2);
  }

  TILEOPS_VEC R load(const float* p) { return _mm256_loadu_ps(p); }
  TILEOPS_VEC R load(const Half* p) { return _mm256_cvtph_ps(load_bits(p)); }
  TILEOPS_VEC R load(const BFloat16* p) { return from_bf16(load_bits(p)); }
  TILEOPS_VEC R load(const double* p) {
    return _mm256_set_m128(_mm256_cvtpd_ps(_mm256_loadu_pd(p + 4)),
                           _mm256_cvtpd_ps(_mm256_loadu_pd(p)));
  }

  TILEOPS_VEC R load_part(const float* p, int64_t count, float fill = 0.0f) {
    const __m256i m = mask(count);
    return _mm256_blendv_ps(set1(fill), _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
  }
  TILEOPS_VEC R load_part(const Half* p, int64_t count, float fill = 0.0f) {
    return _mm256_blendv_ps(set1(fill), _mm256_cvtph_ps(load_bits_part(p, count)),
                            _mm256_castsi256_ps(mask(count)));
  }
  TILEOPS_VEC R load_part(const BFloat16* p, int64_t count, float fill = 0.0f) {
    return _mm256_blendv_ps(set1(fill), from_bf16(load_bits_part(p, count)),
                            _mm256_castsi256_ps(mask(count)));
  }

  TILEOPS_VEC void store(float* p, R v) { _mm256_storeu_ps(p, v); }
  TILEOPS_VEC void store(Half* p, R v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), to_half(v));
  }
  TILEOPS_VEC void store(BFloat16* p, R v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), to_bf16(v));
  }
  TILEOPS_VEC void store_part(float* p, R v, int64_t count) {
    _mm256_maskstore_ps(p, mask(count), v);
  }
  TILEOPS_VEC void store_part(Half* p, R v, int64_t count) {
    store_bits_part(p, to_half(v), count);
  }
  TILEOPS_VEC void store_part(BFloat16* p, R v, int64_t count) {
    store_bits_part(p, to_bf16(v), count);
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

  TILEOPS_VEC R add(R a, R b) { return _mm256_add_ps(a, b); }
  TILEOPS_VEC R sub(R a, R b) { return _mm256_sub_ps(a, b); }
  TILEOPS_VEC R mul(R a, R b) { return _mm256_mul_ps(a, b); }
  TILEOPS_VEC R fma(R a, R b, R c) { return _mm256_fmadd_ps(a, b, c); }
  // max and min return b when either operand is NaN, as the x86 instructions do.
  TILEOPS_VEC R max(R a, R b) { return _mm256_max_ps(a, b); }
  TILEOPS_VEC R min(R a, R b) { return _mm256_min_ps(a, b); }
  // 1 / d to a few ulp: a 12-bit estimate and one Newton step; d must be finite and normal.
  TILEOPS_VEC R reciprocal(R d) {
    const R r = _mm256_rcp_ps(d);
    return mul(r, _mm256_fnmadd_ps(d, r, set1(2.0f)));
  }

  TILEOPS_VEC float sum(R v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
  }
  TILEOPS_VEC float max_of(R v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_max_ss(s, _mm_movehdup_ps(s)));
  }
  TILEOPS_VEC float prod(R v) {
    __m128 s = _mm_mul_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_mul_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_mul_ss(s, _mm_movehdup_ps(s)));
  }

  // exp with a relative error of a few ulp: 2^round(x log2 e) times a degree-7 polynomial of the
  // remainder. Below ln(FLT_MIN) it returns 0 and above ln(FLT_MAX) infinity; NaN stays NaN.
  TILEOPS_VEC R exp(R x) {
    const R lo = set1(-87.33654f);
    const R hi = set1(88.72283f);
    const R xc = min(hi, max(lo, x));
    R fx = _mm256_round_ps(mul(xc, set1(1.44269504088896341f)),
                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    fx = min(fx, set1(127.0f));
    R r = _mm256_fnmadd_ps(fx, set1(0.693359375f), xc);
    r = _mm256_fnmadd_ps(fx, set1(-2.12194440e-4f), r);
    R p = set1(1.9875691500e-4f);
    p = fma(p, r, set1(1.3981999507e-3f));
    p = fma(p, r, set1(8.3334519073e-3f));
    p = fma(p, r, set1(4.1665795894e-2f));
    p = fma(p, r, set1(1.6666665459e-1f));
    p = fma(p, r, set1(5.0000001201e-1f));
    p = fma(p, mul(r, r), add(r, set1(1.0f)));
    const __m256i exponent =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(fx), _mm256_set1_epi32(127)), 23);
    R result = mul(p, _mm256_castsi256_ps(exponent));
    result = _mm256_blendv_ps(result, zero(), _mm256_cmp_ps(x, lo, _CMP_LT_OQ));
    return _mm256_blendv_ps(result, set1(std::numeric_limits<float>::infinity()),
                            _mm256_cmp_ps(x, hi, _CMP_GT_OQ));
  }
};

struct Vd {
  using R = __m256d;
  static constexpr int64_t width = 4;

  TILEOPS_VEC R set1(double v) { return _mm256_set1_pd(v); }

  TILEOPS_VEC __m128i load_bits(const void* p) {
    return _mm_loadl_epi64(static_cast<const __m128i*>(p));
  }
  TILEOPS_VEC R load(const double* p) { return _mm256_loadu_pd(p); }
  TILEOPS_VEC R load(const float* p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
  TILEOPS_VEC R load(const Half* p) { return _mm256_cvtps_pd(_mm_cvtph_ps(load_bits(p))); }
  TILEOPS_VEC R load(const BFloat16* p) {
    return _mm256_cvtps_pd(_mm_castsi128_ps(_mm_slli_epi32(_mm_cvtepu16_epi32(load_bits(p)), 16)));
  }
  TILEOPS_VEC void store(double* p, R v) { _mm256_storeu_pd(p, v); }

  TILEOPS_VEC R add(R a, R b) { return _mm256_add_pd(a, b); }
  TILEOPS_VEC R mul(R a, R b) { return _mm256_mul_pd(a, b); }
  TILEOPS_VEC double sum(R v) {
    const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
  }
  TILEOPS_VEC double prod(R v) {
    const __m128d s = _mm_mul_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_mul_sd(s, _mm_unpackhi_pd(s, s)));
  }
};

}  // namespace
}  // namespace tileops::cpu
