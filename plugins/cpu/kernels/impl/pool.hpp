// Max and average pooling, separably: for one output row, the window's input rows are reduced
// into a float row as wide as the input with whole vectors, then each output element reduces its
// window's columns of that row.
#pragma once

#include <algorithm>
#include <limits>

#include "impl/dispatch.hpp"

namespace tileops::cpu {
namespace {

// max(acc, v) that keeps a NaN of either: Vf::max returns its second operand for a NaN in either.
[[gnu::always_inline]] inline Vf::R max_keeping_nan(Vf::R acc, Vf::R v) {
  return ((v > acc) | (v != v)) ? v : acc;
}

// row[0, w) = the maximum (kMax) or the sum of x's rows r0 + t * dilation for t < kernel that
// lie inside the plane; -inf or 0 where none does.
template <bool kMax, class T>
void reduce_window_rows(const T* plane, int64_t h, int64_t w, int64_t r0, int64_t kernel, int64_t dilation, float* row) {
  const Vf::R init = Vf::set1(kMax ? -std::numeric_limits<float>::infinity() : 0.0f);
  for_each_vector(0, w, [&](int64_t j, int64_t lanes) { Vf::storen(row + j, init, lanes); });
  for (int64_t t = 0; t < kernel; ++t) {
    const int64_t r = r0 + t * dilation;
    if (r < 0 || r >= h) continue;
    const T* src = plane + r * w;
    for_each_vector(0, w, [&](int64_t j, int64_t lanes) {
      const Vf::R acc = Vf::loadn(row + j, lanes);
      const Vf::R v = Vf::loadn(src + j, lanes);
      Vf::storen(row + j, kMax ? max_keeping_nan(acc, v) : Vf::add(acc, v), lanes);
    });
  }
}

template <class T>
void max_pool2d_rows(const PoolArgs& a, float* row, int64_t i0, int64_t i1) {
  const Pool2dWindow& win = a.window;
  for (int64_t item = i0; item < i1; ++item) {
    const int64_t plane = item / a.out_h, i = item % a.out_h;
    reduce_window_rows<true>(static_cast<const T*>(a.x) + plane * a.h * a.w, a.h, a.w, i * win.stride_h - win.padding_h,
                             win.kernel_h, win.dilation_h, row);
    T* out = static_cast<T*>(a.y) + item * a.out_w;
    for (int64_t j = 0; j < a.out_w; ++j) {
      const int64_t c0 = j * win.stride_w - win.padding_w;
      float best = -std::numeric_limits<float>::infinity();
      for (int64_t t = 0; t < win.kernel_w; ++t) {
        const int64_t c = c0 + t * win.dilation_w;
        if (c < 0 || c >= a.w) continue;
        const float v = row[c];
        if (v > best || v != v) best = v;  // a NaN, once taken, is never replaced
      }
      out[j] = from_float<T>(best);
    }
  }
}

template <class T>
void avg_pool2d_rows(const PoolArgs& a, float* row, int64_t i0, int64_t i1) {
  const Pool2dWindow& win = a.window;
  for (int64_t item = i0; item < i1; ++item) {
    const int64_t plane = item / a.out_h, i = item % a.out_h;
    const int64_t r0 = i * win.stride_h - win.padding_h;
    reduce_window_rows<false>(static_cast<const T*>(a.x) + plane * a.h * a.w, a.h, a.w, r0, win.kernel_h, 1, row);
    const int64_t padded_rows = std::min(r0 + win.kernel_h, a.h + win.padding_h) - r0;
    const int64_t rows = std::min(r0 + win.kernel_h, a.h) - std::max<int64_t>(r0, 0);
    T* out = static_cast<T*>(a.y) + item * a.out_w;
    for (int64_t j = 0; j < a.out_w; ++j) {
      const int64_t c0 = j * win.stride_w - win.padding_w;
      const int64_t c1 = std::min(c0 + win.kernel_w, a.w + win.padding_w);
      const int64_t cs = std::max<int64_t>(c0, 0), ce = std::min(c1, a.w);
      float sum = 0.0f;
      for (int64_t c = cs; c < ce; ++c) sum += row[c];
      const int64_t divisor =
          a.divisor != 0 ? a.divisor : (a.count_include_pad ? padded_rows * (c1 - c0) : rows * (ce - cs));
      out[j] = from_float<T>(sum / static_cast<float>(divisor));
    }
  }
}

void max_pool2d_kernel(const PoolArgs& args, float* row, int64_t i0, int64_t i1) {
  with_float_type("max_pool2d", args.dtype, [&]<class T>() { max_pool2d_rows<T>(args, row, i0, i1); });
}

void avg_pool2d_kernel(const PoolArgs& args, float* row, int64_t i0, int64_t i1) {
  with_float_type("avg_pool2d", args.dtype, [&]<class T>() { avg_pool2d_rows<T>(args, row, i0, i1); });
}

}  // namespace
}  // namespace tileops::cpu
