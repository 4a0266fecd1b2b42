// Softmax over rows.
#pragma once

#include <limits>
#include <type_traits>

#include "impl/rows.hpp"

namespace tileops::cpu {
namespace {

template <class T>
[[gnu::always_inline]] inline auto max_step(const T* row) {
  return [row](Vf::R acc, int64_t j, int64_t lanes) {
    return Vf::max(acc, Vf::loadn(row + j, lanes, -std::numeric_limits<float>::infinity()));
  };
}

// e = exp(x - max) over a row in cache; returns the sum of e.
template <class T>
float exp_sum(const T* x, float* e, int64_t n, Vf::R max) {
  return Vf::sum(pipelined_row<true>(
      n, Vf::zero(), kNoWrite,
      [&](Vf::R acc, int64_t j, int64_t lanes) {
        // Lanes past the row load as -inf, whose exponential is 0.
        const Vf::R v =
            Vf::exp(Vf::sub(Vf::loadn(x + j, lanes, -std::numeric_limits<float>::infinity()), max));
        Vf::storen(e + j, v, lanes);
        return Vf::add(acc, v);
      },
      kAdd));
}

// The exponentials of a row go to scratch (n floats, in cache), so that y is written once, and
// rounded once for half types.
template <class T>
void softmax_rows(const T* x, T* y, int64_t n, float* scratch, int64_t r0, int64_t r1) {
  const Vf::R lowest = Vf::set1(-std::numeric_limits<float>::infinity());
  float max = Vf::max_of(pipelined_row<true>(n, lowest, kNoWrite, max_step(x + r0 * n), kMax));
  for (int64_t r = r0; r < r1; ++r) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    const Vf::R inv = Vf::set1(1.0f / exp_sum(xr, scratch, n, Vf::set1(max)));
    const auto write = [&](int64_t j, int64_t lanes) {
      Vf::storen(yr + j, Vf::mul(Vf::loadn(scratch + j, lanes), inv), lanes);
    };
    if (r + 1 < r1) {
      max = Vf::max_of(pipelined_row<true>(n, lowest, write, max_step(xr + n), kMax));
    } else {
      pipelined_row<false>(n, lowest, write, kNoStep, kMax);
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
