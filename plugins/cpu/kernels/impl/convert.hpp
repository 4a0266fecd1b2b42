// Dtype conversion of matrix rows (the half-precision GEMM operands) and the ALiBi bias.
#pragma once

#include "impl/dispatch.hpp"

namespace tileops::cpu {
namespace {

template <class From, class To>
void convert_rows(const From* src, int64_t ld_src, To* dst, int64_t ld_dst, int64_t cols,
                  int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const From* s = src + r * ld_src;
    To* d = dst + r * ld_dst;
    for_each_vector(0, cols, [&](int64_t j, int64_t lanes) {
      Vf::storen(d + j, Vf::loadn(s + j, lanes), lanes);
    });
  }
}

void convert_kernel(DType from, DType to, const void* src, int64_t ld_src, void* dst,
                    int64_t ld_dst, int64_t cols, int64_t r0, int64_t r1) {
  with_float_type("convert", from, [&]<class F>() {
    with_float_type("convert", to, [&]<class T>() {
      convert_rows(static_cast<const F*>(src), ld_src, static_cast<T*>(dst), ld_dst, cols, r0, r1);
    });
  });
}

template <class T>
void alibi_tile(const float* slopes, int64_t seq_len, T* y, int64_t r0, int64_t r1, int64_t c0,
                int64_t c1) {
  const Vf::R step = Vf::set1(static_cast<float>(Vf::width));
  for (int64_t r = r0; r < r1; ++r) {
    const Vf::R slope = Vf::set1(slopes[r / seq_len]);
    const int64_t i = r % seq_len;
    T* yr = y + r * seq_len;
    // j - i is an integer below 2^24 in magnitude, exact in float.
    Vf::R distance = Vf::add(Vf::iota(), Vf::set1(static_cast<float>(c0 - i)));
    for_each_vector(c0, c1, [&](int64_t j, int64_t lanes) {
      Vf::storen(yr + j, Vf::mul(slope, distance), lanes);
      distance = Vf::add(distance, step);
    });
  }
}

void alibi_kernel(DType dtype, const float* slopes, int64_t seq_len, void* y, int64_t r0,
                  int64_t r1, int64_t c0, int64_t c1) {
  with_float_type("alibi", dtype, [&]<class T>() {
    alibi_tile(slopes, seq_len, static_cast<T*>(y), r0, r1, c0, c1);
  });
}

}  // namespace
}  // namespace tileops::cpu
