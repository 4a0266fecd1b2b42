// SiLU-and-multiply and ReLU.
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

void silu_and_mul_kernel(DType dtype, const void* x, void* y, int64_t n, int64_t r0, int64_t r1,
                         int64_t c0, int64_t c1) {
  with_float_type("silu_and_mul", dtype, [&]<class T>() {
    silu_and_mul_tile(static_cast<const T*>(x), static_cast<T*>(y), n, r0, r1, c0, c1);
  });
}

void relu_kernel(DType dtype, const void* x, void* y, int64_t i0, int64_t i1) {
  with_float_type("relu", dtype, [&]<class T>() {
    relu_range(static_cast<const T*>(x), static_cast<T*>(y), i0, i1);
  });
}

}  // namespace
}  // namespace tileops::cpu
