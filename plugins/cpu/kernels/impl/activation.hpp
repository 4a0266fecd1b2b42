// SiLU-and-multiply, ReLU and GELU.
#pragma once

#include "impl/dispatch.hpp"

namespace tileops::cpu {
namespace {

template <class T>
void silu_and_mul_tile(const T* x, T* y, int64_t n, int64_t r0, int64_t r1, int64_t c0,
                       int64_t c1) {
  const Vf::R one = Vf::set1(1.0f);
  // Below -80 the sigmoid is under 2e-35: clamping there keeps 1 + exp(-g) finite for the
  // reciprocal and changes silu(g) by less than 1e-33.
  const Vf::R floor = Vf::set1(-80.0f);
  const Vf::R zero = Vf::zero();
  for (int64_t r = r0; r < r1; ++r) {
    const T* gate = x + r * 2 * n;
    const T* up = gate + n;
    T* yr = y + r * n;
    for_each_vector(c0, c1, [&](int64_t j, int64_t lanes) {
      const Vf::R g = Vf::loadn(gate + j, lanes);
      const Vf::R denominator = Vf::add(one, Vf::exp(Vf::sub(zero, Vf::max(floor, g))));
      const Vf::R silu = Vf::mul(g, Vf::reciprocal(denominator));
      Vf::storen(yr + j, Vf::mul(silu, Vf::loadn(up + j, lanes)), lanes);
    });
  }
}

template <class T>
void relu_range(const T* x, T* y, int64_t i0, int64_t i1) {
  const Vf::R zero = Vf::zero();
  for_each_vector(i0, i1, [&](int64_t i, int64_t lanes) {
    // max(0, x) returns x, NaN included, unless x < 0.
    Vf::storen(y + i, Vf::max(zero, Vf::loadn(x + i, lanes)), lanes);
  });
}

// GELU is written as gelu(x) = max(x, -0) - a * tail(a) with a = |x|, where tail(a) is the
// weight the approximation gives -a: Phi(-a) for the erf form, sigmoid(-2 u(a)) for the tanh
// form (gelu = x * sigmoid(2 u) there). Neither side cancels, so negative inputs keep their
// relative accuracy where x * Phi(x) is tiny, and a negative result that underflows is -0.
// tail(a) is 0 in float32 from a = 16 on, so a is capped there: +inf gives +inf, -inf gives -0.
constexpr float kGeluCap = 16.0f;

// 1 / d for d in [1, 6]: Vf::reciprocal refined by one more Newton step, to about half an ulp
// where fma is fused (it computes the step's error term exactly).
TILEOPS_VEC Vf::R gelu_reciprocal(Vf::R d) {
  const Vf::R r = Vf::reciprocal(d);
  return Vf::fma(r, Vf::fma(Vf::sub(Vf::zero(), d), r, Vf::set1(1.0f)), r);
}

// Phi(-a) = exp(-a^2 / 2) * t * g(t) with t = 1 / (1 + 0.3 a), g a degree-9 polynomial in t
// fitted to Phi(-a) exp(a^2 / 2) / t over a in [0, 16], to a relative error of 2.4e-8 with these
// float coefficients. a^2 is split into
// its rounded value h and the error fma gives, so that exp's argument is exact to first order;
// without fused multiply-add (the portable target) that error term is 0.
TILEOPS_VEC Vf::R gelu_erf_tail(Vf::R a) {
  const Vf::R h = Vf::mul(a, a);
  const Vf::R h_error = Vf::fma(a, a, Vf::sub(Vf::zero(), h));
  const Vf::R minus_half = Vf::set1(-0.5f);
  const Vf::R gauss = Vf::mul(Vf::exp(Vf::mul(h, minus_half)),
                              Vf::fma(h_error, minus_half, Vf::set1(1.0f)));
  const Vf::R t = gelu_reciprocal(Vf::fma(Vf::set1(0.3f), a, Vf::set1(1.0f)));
  Vf::R g = Vf::set1(-0.02100994810461998f);
  g = Vf::fma(g, t, Vf::set1(0.11451493203639984f));
  g = Vf::fma(g, t, Vf::set1(-0.2330370545387268f));
  g = Vf::fma(g, t, Vf::set1(0.19809693098068237f));
  g = Vf::fma(g, t, Vf::set1(-0.08454228192567825f));
  g = Vf::fma(g, t, Vf::set1(0.09881468117237091f));
  g = Vf::fma(g, t, Vf::set1(0.07750915735960007f));
  g = Vf::fma(g, t, Vf::set1(0.1104142814874649f));
  g = Vf::fma(g, t, Vf::set1(0.1195516511797905f));
  g = Vf::fma(g, t, Vf::set1(0.11968764662742615f));
  return Vf::mul(gauss, Vf::mul(t, g));
}

// sigmoid(-2 u) = e / (1 + e) with e = exp(-2 u), u = sqrt(2 / pi) * a * (1 + 0.044715 a^2).
TILEOPS_VEC Vf::R gelu_tanh_tail(Vf::R a) {
  const Vf::R inner = Vf::fma(Vf::mul(Vf::set1(0.044715f), a), a, Vf::set1(1.0f));
  const Vf::R e = Vf::exp(Vf::mul(Vf::mul(Vf::set1(-1.5957691216057308f), a), inner));
  return Vf::mul(e, gelu_reciprocal(Vf::add(Vf::set1(1.0f), e)));
}

template <bool kTanh, class T>
void gelu_range(const T* x, T* y, int64_t i0, int64_t i1) {
  const Vf::R negative_zero = Vf::set1(-0.0f);
  const Vf::R cap = Vf::set1(kGeluCap);
  for_each_vector(i0, i1, [&](int64_t i, int64_t lanes) {
    const Vf::R v = Vf::loadn(x + i, lanes);
    // max(-0, v) is v for NaN and for both zeros, -0 for negative v; min(|v|, cap) is the cap
    // for NaN.
    const Vf::R positive_part = Vf::max(negative_zero, v);
    const Vf::R a = Vf::min(Vf::max(v, Vf::sub(Vf::zero(), v)), cap);
    const Vf::R tail = kTanh ? gelu_tanh_tail(a) : gelu_erf_tail(a);
    Vf::storen(y + i, Vf::sub(positive_part, Vf::mul(a, tail)), lanes);
  });
}

// gelu(gate) * up over rows of [gate | up], gelu as gelu_range computes it.
template <bool kTanh, class T>
void gelu_and_mul_tile(const T* x, T* y, int64_t n, int64_t r0, int64_t r1, int64_t c0,
                       int64_t c1) {
  const Vf::R negative_zero = Vf::set1(-0.0f);
  const Vf::R cap = Vf::set1(kGeluCap);
  for (int64_t r = r0; r < r1; ++r) {
    const T* gate = x + r * 2 * n;
    const T* up = gate + n;
    T* yr = y + r * n;
    for_each_vector(c0, c1, [&](int64_t j, int64_t lanes) {
      const Vf::R g = Vf::loadn(gate + j, lanes);
      const Vf::R a = Vf::min(Vf::max(g, Vf::sub(Vf::zero(), g)), cap);
      const Vf::R tail = kTanh ? gelu_tanh_tail(a) : gelu_erf_tail(a);
      const Vf::R gelu = Vf::sub(Vf::max(negative_zero, g), Vf::mul(a, tail));
      Vf::storen(yr + j, Vf::mul(gelu, Vf::loadn(up + j, lanes)), lanes);
    });
  }
}

void silu_and_mul_kernel(DType dtype, const void* x, void* y, int64_t n, int64_t r0, int64_t r1,
                         int64_t c0, int64_t c1) {
  with_float_type("silu_and_mul", dtype, [&]<class T>() {
    silu_and_mul_tile(static_cast<const T*>(x), static_cast<T*>(y), n, r0, r1, c0, c1);
  });
}

void gelu_and_mul_kernel(DType dtype, bool tanh_approximation, const void* x, void* y, int64_t n,
                         int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  with_float_type("gelu_and_mul", dtype, [&]<class T>() {
    if (tanh_approximation) {
      gelu_and_mul_tile<true>(static_cast<const T*>(x), static_cast<T*>(y), n, r0, r1, c0, c1);
    } else {
      gelu_and_mul_tile<false>(static_cast<const T*>(x), static_cast<T*>(y), n, r0, r1, c0, c1);
    }
  });
}

void relu_kernel(DType dtype, const void* x, void* y, int64_t i0, int64_t i1) {
  with_float_type("relu", dtype, [&]<class T>() {
    relu_range(static_cast<const T*>(x), static_cast<T*>(y), i0, i1);
  });
}

void gelu_kernel(DType dtype, bool tanh_approximation, const void* x, void* y, int64_t i0,
                 int64_t i1) {
  with_float_type("gelu", dtype, [&]<class T>() {
    if (tanh_approximation) {
      gelu_range<true>(static_cast<const T*>(x), static_cast<T*>(y), i0, i1);
    } else {
      gelu_range<false>(static_cast<const T*>(x), static_cast<T*>(y), i0, i1);
    }
  });
}

}  // namespace
}  // namespace tileops::cpu
