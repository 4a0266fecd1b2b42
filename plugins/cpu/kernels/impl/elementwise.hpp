// y = a + alpha * b, elementwise and with b broadcast over rows.
#pragma once

#include <cstdint>
#include <type_traits>

#include "impl/dispatch.hpp"

namespace tileops::cpu {
namespace {

// y = a + alpha * b over [i0, i1).
template <class T>
void add_float(const T* a, const T* b, T* y, float alpha, int64_t i0, int64_t i1) {
  if (alpha == 1.0f) {
    for_each_vector(i0, i1, [&](int64_t i, int64_t lanes) {
      Vf::storen(y + i, Vf::add(Vf::loadn(a + i, lanes), Vf::loadn(b + i, lanes)), lanes);
    });
    return;
  }
  const Vf::R scale = Vf::set1(alpha);
  for_each_vector(i0, i1, [&](int64_t i, int64_t lanes) {
    Vf::storen(y + i, Vf::fma(Vf::loadn(b + i, lanes), scale, Vf::loadn(a + i, lanes)), lanes);
  });
}

// Integer addition wraps around: it is done on the unsigned type of the same width.
template <class T>
void add_int(const T* a, const T* b, T* y, int64_t alpha, int64_t i0, int64_t i1) {
  using U = std::make_unsigned_t<T>;
  const U scale = static_cast<U>(alpha);
  for (int64_t i = i0; i < i1; ++i) {
    y[i] = static_cast<T>(static_cast<U>(a[i]) + scale * static_cast<U>(b[i]));
  }
}

template <class F>
void with_add_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::int32:
      f.template operator()<int32_t>();
      return;
    case DType::int64:
      f.template operator()<int64_t>();
      return;
    default:
      with_float_type("add", dtype, f);
  }
}

template <class T>
void add_range(const T* a, const T* b, T* y, double alpha, int64_t i0, int64_t i1) {
  if constexpr (std::is_integral_v<T>) {
    add_int(a, b, y, static_cast<int64_t>(alpha), i0, i1);
  } else {
    add_float(a, b, y, static_cast<float>(alpha), i0, i1);
  }
}

void add_kernel(DType dtype, const void* a, const void* b, void* y, double alpha, int64_t i0,
                int64_t i1) {
  with_add_type(dtype, [&]<class T>() {
    add_range(static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(y), alpha, i0,
              i1);
  });
}

void add_row_broadcast_kernel(DType dtype, const void* a, const void* b_row, void* y, double alpha,
                              int64_t n, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  with_add_type(dtype, [&]<class T>() {
    const T* b = static_cast<const T*>(b_row);
    for (int64_t r = r0; r < r1; ++r) {
      add_range(static_cast<const T*>(a) + r * n, b, static_cast<T*>(y) + r * n, alpha, c0, c1);
    }
  });
}

}  // namespace
}  // namespace tileops::cpu
