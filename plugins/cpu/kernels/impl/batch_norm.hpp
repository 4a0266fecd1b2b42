// Batch normalisation: per-channel statistics and the per-channel affine map.
#pragma once

#include <algorithm>

#include "impl/dispatch.hpp"

namespace tileops::cpu {
namespace {

// Channels per block when the batch rows are runs of C channels (inner == 1).
constexpr int64_t kChannelBlock = 512;

template <class T>
void batch_norm_stats_rows(const T* x, int64_t C, int64_t inner, const float* shift, int64_t n0,
                           int64_t n1, int64_t c0, int64_t c1, double* s1, double* s2) {
  if (inner == 1) {
    for (int64_t cb = c0; cb < c1; cb += kChannelBlock) {
      const int64_t len = std::min(kChannelBlock, c1 - cb);
      alignas(64) float a1[kChannelBlock] = {};
      alignas(64) float a2[kChannelBlock] = {};
      for (int64_t n = n0; n < n1; ++n) {
        const T* row = x + n * C + cb;
        for_each_vector(0, len, [&](int64_t j, int64_t lanes) {
          const Vf::R d = Vf::sub(Vf::loadn(row + j, lanes), Vf::loadn(shift + cb + j, lanes));
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
  constexpr int64_t W = Vf::width;
  for (int64_t c = c0; c < c1; ++c) {
    const float k = shift[c];
    const Vf::R center = Vf::set1(k);
    for (int64_t n = n0; n < n1; ++n) {
      const T* row = x + (n * C + c) * inner;
      Vf::R a0 = Vf::zero(), a1 = Vf::zero(), q0 = Vf::zero(), q1 = Vf::zero();
      int64_t j = 0;
      for (; j + 2 * W <= inner; j += 2 * W) {
        const Vf::R d0 = Vf::sub(Vf::load(row + j), center);
        const Vf::R d1 = Vf::sub(Vf::load(row + j + W), center);
        a0 = Vf::add(a0, d0);
        a1 = Vf::add(a1, d1);
        q0 = Vf::fma(d0, d0, q0);
        q1 = Vf::fma(d1, d1, q1);
      }
      for (; j < inner; j += W) {
        // Lanes past the row load as the shift, so they add nothing.
        const Vf::R d = Vf::sub(Vf::loadn(row + j, lanes_left<Vf>(j, inner), k), center);
        a0 = Vf::add(a0, d);
        q0 = Vf::fma(d, d, q0);
      }
      s1[c] += Vf::sum(Vf::add(a0, a1));
      s2[c] += Vf::sum(Vf::add(q0, q1));
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
                             const float* shift, int64_t n0, int64_t n1, int64_t c0, int64_t c1,
                             double* s1, double* s2) {
  with_float_type("batch_norm", dtype, [&]<class T>() {
    batch_norm_stats_rows(static_cast<const T*>(x), C, inner, shift, n0, n1, c0, c1, s1, s2);
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
