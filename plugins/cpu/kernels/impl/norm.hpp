// RMS and layer normalisation over rows.
#pragma once

#include <cmath>

#include "impl/rows.hpp"

namespace tileops::cpu {
namespace {

// The sum of (x - center)^2 over a row in cache.
template <class T>
float row_sum_squares(const T* x, int64_t n, float center) {
  const Vf::R c = Vf::set1(center);
  return Vf::sum(pipelined_row<true>(
      n, Vf::zero(), kNoWrite,
      [&](Vf::R acc, int64_t j, int64_t lanes) {
        // Lanes past the row load as the center, so they add nothing.
        const Vf::R d = Vf::sub(Vf::loadn(x + j, lanes, center), c);
        return Vf::fma(d, d, acc);
      },
      kAdd));
}

template <class T>
[[gnu::always_inline]] inline auto square_step(const T* row) {
  return [row](Vf::R acc, int64_t j, int64_t lanes) {
    const Vf::R v = Vf::loadn(row + j, lanes);
    return Vf::fma(v, v, acc);
  };
}

// Sums x - pivot with pivot the row's first value: the partial sums stay small next to the
// values, so a mean far from zero loses no precision to them.
template <class T>
[[gnu::always_inline]] inline auto pivoted_sum_step(const T* row) {
  const float pivot = to_float(row[0]);
  return [row, pivot](Vf::R acc, int64_t j, int64_t lanes) {
    return Vf::add(acc, Vf::sub(Vf::loadn(row + j, lanes, pivot), Vf::set1(pivot)));
  };
}

template <class T>
void rms_norm_rows(const T* x, const T* weight, T* y, int64_t n, float eps, int64_t r0,
                   int64_t r1) {
  float sum_squares =
      Vf::sum(pipelined_row<true>(n, Vf::zero(), kNoWrite, square_step(x + r0 * n), kAdd));
  for (int64_t r = r0; r < r1; ++r) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    const Vf::R scale = Vf::set1(1.0f / std::sqrt(sum_squares / static_cast<float>(n) + eps));
    const auto write = [&](int64_t j, int64_t lanes) {
      Vf::R v = Vf::mul(Vf::loadn(xr + j, lanes), scale);
      if (weight != nullptr) v = Vf::mul(v, Vf::loadn(weight + j, lanes));
      Vf::storen(yr + j, v, lanes);
    };
    if (r + 1 < r1) {
      sum_squares = Vf::sum(pipelined_row<true>(n, Vf::zero(), write, square_step(xr + n), kAdd));
    } else {
      pipelined_row<false>(n, Vf::zero(), write, kNoStep, kAdd);
    }
  }
}

// residual += x, stored in T, then y from the stored (rounded) values: the sum of squares is
// gathered from the rounded residual as it is written, the output pass reads it back in cache.
template <class T>
void fused_add_rms_norm_rows(const T* x, T* residual, const T* weight, T* y, int64_t n, float eps,
                             int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const T* xr = x + r * n;
    T* rr = residual + r * n;
    T* yr = y + r * n;
    Vf::R acc = Vf::zero();
    for_each_vector(0, n, [&](int64_t j, int64_t lanes) {
      Vf::storen(rr + j, Vf::add(Vf::loadn(xr + j, lanes), Vf::loadn(rr + j, lanes)), lanes);
      const Vf::R stored = Vf::loadn(rr + j, lanes);  // lanes past the row load as 0
      acc = Vf::fma(stored, stored, acc);
    });
    const Vf::R scale = Vf::set1(1.0f / std::sqrt(Vf::sum(acc) / static_cast<float>(n) + eps));
    for_each_vector(0, n, [&](int64_t j, int64_t lanes) {
      const Vf::R v = Vf::mul(Vf::loadn(rr + j, lanes), scale);
      Vf::storen(yr + j, Vf::mul(v, Vf::loadn(weight + j, lanes)), lanes);
    });
  }
}

template <class T>
void layer_norm_rows(const T* x, const T* weight, const T* bias, T* y, int64_t n, float eps,
                     int64_t r0, int64_t r1) {
  float sum =
      Vf::sum(pipelined_row<true>(n, Vf::zero(), kNoWrite, pivoted_sum_step(x + r0 * n), kAdd));
  for (int64_t r = r0; r < r1; ++r) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    // The variance is taken about the mean in a second pass over the row, now in cache: it does
    // not cancel the way E[x^2] - E[x]^2 does.
    const float mean = to_float(xr[0]) + sum / static_cast<float>(n);
    const float var = row_sum_squares(xr, n, mean) / static_cast<float>(n);
    const Vf::R scale = Vf::set1(1.0f / std::sqrt(var + eps));
    const Vf::R center = Vf::set1(mean);
    const auto write = [&](int64_t j, int64_t lanes) {
      Vf::R v = Vf::mul(Vf::sub(Vf::loadn(xr + j, lanes), center), scale);
      if (weight != nullptr) v = Vf::mul(v, Vf::loadn(weight + j, lanes));
      if (bias != nullptr) v = Vf::add(v, Vf::loadn(bias + j, lanes));
      Vf::storen(yr + j, v, lanes);
    };
    if (r + 1 < r1) {
      sum = Vf::sum(pipelined_row<true>(n, Vf::zero(), write, pivoted_sum_step(xr + n), kAdd));
    } else {
      pipelined_row<false>(n, Vf::zero(), write, kNoStep, kAdd);
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

void fused_add_rms_norm_kernel(DType dtype, const void* x, void* residual, const void* weight, void* y,
                               int64_t n, float eps, int64_t r0, int64_t r1) {
  with_float_type("fused_add_rms_norm", dtype, [&]<class T>() {
    fused_add_rms_norm_rows(static_cast<const T*>(x), static_cast<T*>(residual),
                            static_cast<const T*>(weight), static_cast<T*>(y), n, eps, r0, r1);
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
