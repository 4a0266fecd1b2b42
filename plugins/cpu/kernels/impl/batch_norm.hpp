// Batch normalisation: per-channel statistics and the per-channel affine map.
#pragma once

#include <algorithm>

#include "impl/dispatch.hpp"

namespace tileops::cpu {
namespace {

// Channels per block when the batch rows are runs of C channels (inner == 1).
constexpr int64_t kChannelBlock = 512;

// One row of inner > 1 elements. With Stats, adds the sums of (row - pivot) and its square
// (taken in float32 over the row) to s1 and s2; with Write, writes y_row = (x_row - m) * s + b
// in the same loop. Every row's sums come from this loop, so they do not depend on which of the
// two jobs it was doing.
template <bool Stats, bool Write, class T>
[[gnu::always_inline]] inline void channel_row(const T* row, float pivot, double& s1, double& s2,
                                               const T* x_row, T* y_row, int64_t inner, Vf::R m,
                                               Vf::R s, Vf::R b) {
  constexpr int64_t W = Vf::width;
  const Vf::R k = Vf::set1(pivot);
  Vf::R a0 = Vf::zero(), a1 = Vf::zero(), q0 = Vf::zero(), q1 = Vf::zero();
  const auto write = [&](int64_t j, int64_t lanes) {
    if constexpr (Write) {
      Vf::storen(y_row + j, Vf::fma(Vf::sub(Vf::loadn(x_row + j, lanes), m), s, b), lanes);
    }
  };
  int64_t j = 0;
  for (; j + 2 * W <= inner; j += 2 * W) {
    if constexpr (Stats) {
      const Vf::R d0 = Vf::sub(Vf::load(row + j), k);
      const Vf::R d1 = Vf::sub(Vf::load(row + j + W), k);
      a0 = Vf::add(a0, d0);
      a1 = Vf::add(a1, d1);
      q0 = Vf::fma(d0, d0, q0);
      q1 = Vf::fma(d1, d1, q1);
    }
    write(j, W);
    write(j + W, W);
  }
  for (; j < inner; j += W) {
    const int64_t lanes = lanes_left<Vf>(j, inner);
    if constexpr (Stats) {
      // Lanes past the row load as the pivot, so they add nothing.
      const Vf::R d = Vf::sub(Vf::loadn(row + j, lanes, pivot), k);
      a0 = Vf::add(a0, d);
      q0 = Vf::fma(d, d, q0);
    }
    write(j, lanes);
  }
  if constexpr (Stats) {
    s1 += Vf::sum(Vf::add(a0, a1));
    s2 += Vf::sum(Vf::add(q0, q1));
  }
}

template <class T>
void batch_norm_stats_rows(const T* x, int64_t C, int64_t inner, const float* pivot, int64_t n0,
                           int64_t n1, int64_t c0, int64_t c1, double* s1, double* s2) {
  if (inner == 1) {
    for (int64_t cb = c0; cb < c1; cb += kChannelBlock) {
      const int64_t len = std::min(kChannelBlock, c1 - cb);
      alignas(64) float a1[kChannelBlock] = {};
      alignas(64) float a2[kChannelBlock] = {};
      for (int64_t n = n0; n < n1; ++n) {
        const T* row = x + n * C + cb;
        for_each_vector(0, len, [&](int64_t j, int64_t lanes) {
          const Vf::R d = Vf::sub(Vf::loadn(row + j, lanes), Vf::loadn(pivot + cb + j, lanes));
          Vf::storen(a1 + j, Vf::add(Vf::loadn(a1 + j, lanes), d), lanes);
          Vf::storen(a2 + j, Vf::fma(d, d, Vf::loadn(a2 + j, lanes)), lanes);
        });
      }
      for (int64_t j = 0; j < len; ++j) {
        s1[cb + j] += a1[j];
        s2[cb + j] += a2[j];
      }
    }
    return;
  }
  const Vf::R none = Vf::zero();
  for (int64_t c = c0; c < c1; ++c) {
    for (int64_t n = n0; n < n1; ++n) {
      channel_row<true, false>(x + (n * C + c) * inner, pivot[c], s1[c], s2[c],
                               static_cast<const T*>(nullptr), static_cast<T*>(nullptr), inner,
                               none, none, none);
    }
  }
}

// Normalises channel c (inner > 1) and, when next >= 0, sums channel next in the same loops, so
// that reading the next channel from memory overlaps writing this one.
template <class T>
void batch_norm_channel_rows(const T* x, T* y, int64_t N, int64_t C, int64_t inner, int64_t c,
                             const float* center, const float* scale, const float* shift,
                             int64_t next, const float* pivot, double* s1, double* s2) {
  const Vf::R m = Vf::set1(center[c]);
  const Vf::R s = Vf::set1(scale[c]);
  const Vf::R b = Vf::set1(shift[c]);
  for (int64_t n = 0; n < N; ++n) {
    const int64_t at = (n * C + c) * inner;
    if (next >= 0) {
      channel_row<true, true>(x + (n * C + next) * inner, pivot[next], s1[next], s2[next], x + at,
                              y + at, inner, m, s, b);
    } else {
      double unused = 0.0;
      channel_row<false, true>(x + at, 0.0f, unused, unused, x + at, y + at, inner, m, s, b);
    }
  }
}

template <class T>
void batch_norm_apply_rows(const T* x, T* y, int64_t C, int64_t inner, const float* center,
                           const float* scale, const float* shift, int64_t i0, int64_t i1) {
  if (inner == 1) {
    for (int64_t n = i0; n < i1; ++n) {
      const T* xr = x + n * C;
      T* yr = y + n * C;
      for_each_vector(0, C, [&](int64_t j, int64_t lanes) {
        const Vf::R d = Vf::sub(Vf::loadn(xr + j, lanes), Vf::loadn(center + j, lanes));
        Vf::storen(yr + j, Vf::fma(d, Vf::loadn(scale + j, lanes), Vf::loadn(shift + j, lanes)),
                   lanes);
      });
    }
    return;
  }
  for (int64_t row = i0; row < i1; ++row) {
    const int64_t c = row % C;
    const Vf::R m = Vf::set1(center[c]);
    const Vf::R s = Vf::set1(scale[c]);
    const Vf::R b = Vf::set1(shift[c]);
    const T* xr = x + row * inner;
    T* yr = y + row * inner;
    for_each_vector(0, inner, [&](int64_t j, int64_t lanes) {
      Vf::storen(yr + j, Vf::fma(Vf::sub(Vf::loadn(xr + j, lanes), m), s, b), lanes);
    });
  }
}

void batch_norm_stats_kernel(DType dtype, const void* x, int64_t C, int64_t inner,
                             const float* pivot, int64_t n0, int64_t n1, int64_t c0, int64_t c1,
                             double* s1, double* s2) {
  with_float_type("batch_norm", dtype, [&]<class T>() {
    batch_norm_stats_rows(static_cast<const T*>(x), C, inner, pivot, n0, n1, c0, c1, s1, s2);
  });
}

void batch_norm_channel_kernel(DType dtype, const void* x, void* y, int64_t N, int64_t C,
                               int64_t inner, int64_t c, const float* center, const float* scale,
                               const float* shift, int64_t next, const float* pivot, double* s1,
                               double* s2) {
  with_float_type("batch_norm", dtype, [&]<class T>() {
    batch_norm_channel_rows(static_cast<const T*>(x), static_cast<T*>(y), N, C, inner, c, center,
                            scale, shift, next, pivot, s1, s2);
  });
}

void batch_norm_apply_kernel(DType dtype, const void* x, void* y, int64_t C, int64_t inner,
                             const float* center, const float* scale, const float* shift,
                             int64_t i0, int64_t i1) {
  with_float_type("batch_norm", dtype, [&]<class T>() {
    batch_norm_apply_rows(static_cast<const T*>(x), static_cast<T*>(y), C, inner, center, scale,
                          shift, i0, i1);
  });
}

}  // namespace
}  // namespace tileops::cpu
