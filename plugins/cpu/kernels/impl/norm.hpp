// RMS and layer normalisation over rows.
#pragma once

#include <cmath>

#include "impl/dispatch.hpp"

namespace tileops::cpu {
namespace {

template <class T>
float row_sum(const T* x, int64_t n) {
  Vf::R a0 = Vf::zero(), a1 = Vf::zero(), a2 = Vf::zero(), a3 = Vf::zero();
  constexpr int64_t W = Vf::width;
  int64_t j = 0;
  for (; j + 4 * W <= n; j += 4 * W) {
    a0 = Vf::add(a0, Vf::load(x + j));
    a1 = Vf::add(a1, Vf::load(x + j + W));
    a2 = Vf::add(a2, Vf::load(x + j + 2 * W));
    a3 = Vf::add(a3, Vf::load(x + j + 3 * W));
  }
  for (; j < n; j += W) a0 = Vf::add(a0, Vf::loadn(x + j, lanes_left<Vf>(j, n)));
  return Vf::sum(Vf::add(Vf::add(a0, a1), Vf::add(a2, a3)));
}

// The sum of (x - center)^2 over a row.
template <class T>
float row_sum_squares(const T* x, int64_t n, float center) {
  const Vf::R c = Vf::set1(center);
  Vf::R a0 = Vf::zero(), a1 = Vf::zero(), a2 = Vf::zero(), a3 = Vf::zero();
  constexpr int64_t W = Vf::width;
  int64_t j = 0;
  for (; j + 4 * W <= n; j += 4 * W) {
    const Vf::R d0 = Vf::sub(Vf::load(x + j), c);
    const Vf::R d1 = Vf::sub(Vf::load(x + j + W), c);
    const Vf::R d2 = Vf::sub(Vf::load(x + j + 2 * W), c);
    const Vf::R d3 = Vf::sub(Vf::load(x + j + 3 * W), c);
    a0 = Vf::fma(d0, d0, a0);
    a1 = Vf::fma(d1, d1, a1);
    a2 = Vf::fma(d2, d2, a2);
    a3 = Vf::fma(d3, d3, a3);
  }
  for (; j < n; j += W) {
    // Lanes past the row are filled with the center, so they add nothing.
    const Vf::R d = Vf::sub(Vf::loadn(x + j, lanes_left<Vf>(j, n), center), c);
    a0 = Vf::fma(d, d, a0);
  }
  return Vf::sum(Vf::add(Vf::add(a0, a1), Vf::add(a2, a3)));
}

template <class T>
void rms_norm_rows(const T* x, const T* weight, T* y, int64_t n, float eps, int64_t r0,
                   int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    const float mean_square = row_sum_squares(xr, n, 0.0f) / static_cast<float>(n);
    const Vf::R scale = Vf::set1(1.0f / std::sqrt(mean_square + eps));
    const T* next = r + 1 < r1 ? xr + n : xr;
    for (int64_t j = 0; j < n; j += Vf::width) {
      const int64_t lanes = lanes_left<Vf>(j, n);
      Vf::prefetch(next + j);
      Vf::R v = Vf::mul(Vf::loadn(xr + j, lanes), scale);
      if (weight != nullptr) v = Vf::mul(v, Vf::loadn(weight + j, lanes));
      Vf::storen(yr + j, v, lanes);
    }
  }
}

template <class T>
void layer_norm_rows(const T* x, const T* weight, const T* bias, T* y, int64_t n, float eps,
                     int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    // Two passes over the row, which is in cache by the second: the variance about the mean
    // does not cancel the way E[x^2] - E[x]^2 does.
    const float mean = row_sum(xr, n) / static_cast<float>(n);
    const float var = row_sum_squares(xr, n, mean) / static_cast<float>(n);
    const float rstd = 1.0f / std::sqrt(var + eps);
    const Vf::R scale = Vf::set1(rstd);
    const Vf::R center = Vf::set1(mean);
    for (int64_t j = 0; j < n; j += Vf::width) {
      const int64_t lanes = lanes_left<Vf>(j, n);
      Vf::R v = Vf::mul(Vf::sub(Vf::loadn(xr + j, lanes), center), scale);
      if (weight != nullptr) v = Vf::mul(v, Vf::loadn(weight + j, lanes));
      if (bias != nullptr) v = Vf::add(v, Vf::loadn(bias + j, lanes));
      Vf::storen(yr + j, v, lanes);
    }
  }
}

void rms_norm_kernel(DType dtype, const void* x, const void* weight, void* y, int64_t n, float eps,
                     int64_t r0, int64_t r1) {
  with_float_type("rms_norm", dtype, [&]<class T>() {
    rms_norm_rows(static_cast<const T*>(x), static_cast<const T*>(weight), static_cast<T*>(y), n,
                  eps, r0, r1);
  });
}

void layer_norm_kernel(DType dtype, const void* x, const void* weight, const void* bias, void* y,
                       int64_t n, float eps, int64_t r0, int64_t r1) {
  with_float_type("layer_norm", dtype, [&]<class T>() {
    layer_norm_rows(static_cast<const T*>(x), static_cast<const T*>(weight),
                    static_cast<const T*>(bias), static_cast<T*>(y), n, eps, r0, r1);
  });
}

}  // namespace
}  // namespace tileops::cpu
