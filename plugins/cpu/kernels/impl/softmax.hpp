// Softmax over rows.
#pragma once

#include <limits>
#include <type_traits>

#include "impl/dispatch.hpp"

namespace tileops::cpu {
namespace {

template <class T>
float row_max(const T* x, int64_t n) {
  constexpr float lowest = -std::numeric_limits<float>::infinity();
  constexpr int64_t W = Vf::width;
  Vf::R m0 = Vf::set1(lowest), m1 = m0, m2 = m0, m3 = m0;
  int64_t j = 0;
  for (; j + 4 * W <= n; j += 4 * W) {
    m0 = Vf::max(m0, Vf::load(x + j));
    m1 = Vf::max(m1, Vf::load(x + j + W));
    m2 = Vf::max(m2, Vf::load(x + j + 2 * W));
    m3 = Vf::max(m3, Vf::load(x + j + 3 * W));
  }
  for (; j < n; j += W) m0 = Vf::max(m0, Vf::loadn(x + j, lanes_left<Vf>(j, n), lowest));
  return Vf::max_of(Vf::max(Vf::max(m0, m1), Vf::max(m2, m3)));
}

// e = exp(x - max) over a row; returns its sum.
template <class T>
float exp_sum(const T* x, float* e, int64_t n, Vf::R max) {
  constexpr float lowest = -std::numeric_limits<float>::infinity();
  Vf::R s0 = Vf::zero(), s1 = Vf::zero();
  constexpr int64_t W = Vf::width;
  int64_t j = 0;
  for (; j + 2 * W <= n; j += 2 * W) {
    const Vf::R e0 = Vf::exp(Vf::sub(Vf::load(x + j), max));
    const Vf::R e1 = Vf::exp(Vf::sub(Vf::load(x + j + W), max));
    Vf::store(e + j, e0);
    Vf::store(e + j + W, e1);
    s0 = Vf::add(s0, e0);
    s1 = Vf::add(s1, e1);
  }
  for (; j < n; j += W) {
    const int64_t lanes = lanes_left<Vf>(j, n);
    // Lanes past the row load as -inf, whose exponential is 0.
    const Vf::R v = Vf::exp(Vf::sub(Vf::loadn(x + j, lanes, lowest), max));
    Vf::storen(e + j, v, lanes);
    s0 = Vf::add(s0, v);
  }
  return Vf::sum(Vf::add(s0, s1));
}

// The exponentials go to y itself for float rows, and to scratch (n floats) for half rows, so
// that the results are rounded to 16 bits once.
template <class T>
void softmax_rows(const T* x, T* y, int64_t n, float* scratch, int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    float* e = std::is_same_v<T, float> ? reinterpret_cast<float*>(yr) : scratch;
    const Vf::R max = Vf::set1(row_max(xr, n));
    const Vf::R inv = Vf::set1(1.0f / exp_sum(xr, e, n, max));
    for (int64_t j = 0; j < n; j += Vf::width) {
      const int64_t lanes = lanes_left<Vf>(j, n);
      Vf::storen(yr + j, Vf::mul(Vf::loadn(e + j, lanes), inv), lanes);
    }
  }
}

void softmax_kernel(DType dtype, const void* x, void* y, int64_t n, float* scratch, int64_t r0,
                    int64_t r1) {
  with_float_type("softmax", dtype, [&]<class T>() {
    softmax_rows(static_cast<const T*>(x), static_cast<T*>(y), n, scratch, r0, r1);
  });
}

}  // namespace
}  // namespace tileops::cpu
