// Products of a few float32 rows with rows of a half-precision matrix (decode-sized GEMMs with
// [n, k] weights): the weight rows are converted in registers, so each is read once, as stored.
#pragma once

#include <algorithm>
#include <utility>

#include "impl/dispatch.hpp"

namespace tileops::cpu {
namespace {

// M (a compile-time row count, so that the accumulators stay in registers) rows of a against
// rows [n0, n1) of w: each vector of a weight row is loaded and converted once for all M rows.
// The loops over M are unrolled by pragma: -O2 would keep the accumulators in memory otherwise.
// The rows of a are walked in pieces of 16 KiB in all, so that they stay in L1 while a block
// of weight rows streams past; each weight row's partial sums wait in L1 between pieces.
template <int M, class T>
void dot_rows(const float* a, int64_t k, const T* w, int64_t ldw, T* d, int64_t ldd, int64_t n0,
              int64_t n1) {
  constexpr int64_t W = Vf::width;
  constexpr int64_t kPiece = (int64_t{4096} / M) / W * W;  // floats of each row of a per piece
  constexpr int64_t kRows = 16;                            // weight rows per block
  for (int64_t b0 = n0; b0 < n1; b0 += kRows) {
    const int64_t rows = std::min(kRows, n1 - b0);
    Vf::R partial[kRows][M];
    for (int64_t r = 0; r < rows; ++r) {
      #pragma GCC unroll 8
      for (int i = 0; i < M; ++i) partial[r][i] = Vf::zero();
    }
    for (int64_t k0 = 0; k0 < k; k0 += kPiece) {
      const int64_t k1 = std::min(k, k0 + kPiece);
      for (int64_t r = 0; r < rows; ++r) {
        const T* wn = w + (b0 + r) * ldw;
        Vf::R acc[M];
        #pragma GCC unroll 8
        for (int i = 0; i < M; ++i) acc[i] = partial[r][i];
        int64_t j = k0;
        for (; j + W <= k1; j += W) {
          const Vf::R wv = Vf::load(wn + j);
          #pragma GCC unroll 8
          for (int i = 0; i < M; ++i) acc[i] = Vf::fma(Vf::load(a + i * k + j), wv, acc[i]);
        }
        if (j < k1) {
          const int64_t lanes = k1 - j;
          const Vf::R wv = Vf::loadn(wn + j, lanes);
          #pragma GCC unroll 8
          for (int i = 0; i < M; ++i) acc[i] = Vf::fma(Vf::loadn(a + i * k + j, lanes), wv, acc[i]);
        }
        #pragma GCC unroll 8
        for (int i = 0; i < M; ++i) partial[r][i] = acc[i];
      }
    }
    // One lane stored: rounded to T exactly as every vector store rounds.
    for (int64_t r = 0; r < rows; ++r) {
      #pragma GCC unroll 8
      for (int i = 0; i < M; ++i) Vf::storen(d + i * ldd + b0 + r, Vf::set1(Vf::sum(partial[r][i])), 1);
    }
  }
}

template <class T, int... M>
void dot_rows_for(int64_t m, std::integer_sequence<int, M...>, const float* a, int64_t k,
                  const T* w, int64_t ldw, T* d, int64_t ldd, int64_t n0, int64_t n1) {
  ((m == M + 1 ? dot_rows<M + 1>(a, k, w, ldw, d, ldd, n0, n1) : void()), ...);
}

void dot_rows_kernel(DType dtype, const float* a, int64_t m, int64_t k, const void* w, int64_t ldw,
                     void* d, int64_t ldd, int64_t n0, int64_t n1) {
  with_float_type("dot_rows", dtype, [&]<class T>() {
    dot_rows_for(m, std::make_integer_sequence<int, kMaxDotRows>(), a, k, static_cast<const T*>(w), ldw,
                 static_cast<T*>(d), ldd, n0, n1);
  });
}

}  // namespace
}  // namespace tileops::cpu
