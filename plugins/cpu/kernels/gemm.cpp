#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu_kernels.hpp"
#include "kernel_table.hpp"
#include "thread_pool.hpp"
#include "validate.hpp"

namespace tileops::cpu {
namespace {

constexpr int64_t kBlasMax = std::numeric_limits<blasint>::max();
// Half-precision operands are converted in blocks of at most this many float32 elements each
// (64 MiB), which bounds the scratch memory of a large call.
constexpr int64_t kPanelElems = int64_t{16} << 20;

CBLAS_TRANSPOSE transpose(bool trans) { return trans ? CblasTrans : CblasNoTrans; }

// Converts a [rows, cols] block with row stride ld_src into one with row stride ld_dst, in
// parallel over rows.
void convert(const KernelTable& kernels, DType from, DType to, const void* src, int64_t ld_src,
             void* dst, int64_t ld_dst, int64_t rows, int64_t cols) {
  const auto bytes = static_cast<int64_t>(cols * (dtype_size(from) + dtype_size(to)));
  parallel_for(rows, bytes, [&](int64_t r0, int64_t r1) {
    kernels.convert(from, to, src, ld_src, dst, ld_dst, cols, r0, r1);
  });
}

// d = op(a) op(b) for float16 and bfloat16: blocks of op(a) rows and op(b) columns are converted
// to float32, multiplied by sgemm and rounded back into d.
void half_gemm(DType dtype, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
               bool trans_a, const void* b, int64_t ldb, bool trans_b, void* d, int64_t ldd) {
  const KernelTable& kernels = active_kernels();
  const int64_t mb_max = std::clamp<int64_t>(kPanelElems / k, 1, m);
  const int64_t nb_max = std::clamp<int64_t>(kPanelElems / std::max(k, mb_max), 1, n);
  // The scratch stays with the calling thread: fresh pages would cost a fault each, every call.
  thread_local std::vector<float> a_scratch, b_scratch, c_scratch;
  a_scratch.resize(static_cast<std::size_t>(mb_max * k));
  b_scratch.resize(static_cast<std::size_t>(k * nb_max));
  c_scratch.resize(static_cast<std::size_t>(mb_max * nb_max));
  float* const a_f = a_scratch.data();
  float* const b_f = b_scratch.data();
  float* const c_f = c_scratch.data();
  const auto* a_bytes = static_cast<const std::byte*>(a);
  const auto* b_bytes = static_cast<const std::byte*>(b);
  auto* d_bytes = static_cast<std::byte*>(d);
  constexpr int64_t elem = 2;

  // Columns [n0, n0 + nb) of op(b) into b_f; returns its row stride.
  const auto convert_b = [&](int64_t n0, int64_t nb) {
    if (trans_b) {
      convert(kernels, dtype, DType::float32, b_bytes + n0 * ldb * elem, ldb, b_f, k, nb, k);
      return k;
    }
    convert(kernels, dtype, DType::float32, b_bytes + n0 * elem, ldb, b_f, nb, k, nb);
    return nb;
  };
  const bool one_b_block = nb_max == n;
  const int64_t ldb_whole = one_b_block ? convert_b(0, n) : 0;

  for (int64_t m0 = 0; m0 < m; m0 += mb_max) {
    const int64_t mb = std::min(mb_max, m - m0);
    int64_t lda_f = k;
    if (trans_a) {
      convert(kernels, dtype, DType::float32, a_bytes + m0 * elem, lda, a_f, mb, k, mb);
      lda_f = mb;
    } else {
      convert(kernels, dtype, DType::float32, a_bytes + m0 * lda * elem, lda, a_f, k, mb, k);
    }
    for (int64_t n0 = 0; n0 < n; n0 += nb_max) {
      const int64_t nb = std::min(nb_max, n - n0);
      const int64_t ldb_f = one_b_block ? ldb_whole : convert_b(n0, nb);
      cblas_sgemm(CblasRowMajor, transpose(trans_a), transpose(trans_b), static_cast<blasint>(mb),
                  static_cast<blasint>(nb), static_cast<blasint>(k), 1.0f, a_f,
                  static_cast<blasint>(lda_f), b_f, static_cast<blasint>(ldb_f), 0.0f, c_f,
                  static_cast<blasint>(nb));
      convert(kernels, DType::float32, dtype, c_f, nb, d_bytes + (m0 * ldd + n0) * elem, ldd, mb,
              nb);
    }
  }
}

void check_stride(const char* name, int64_t ld, int64_t row_length) {
  if (ld < std::max<int64_t>(row_length, 1) || ld > kBlasMax) {
    throw std::invalid_argument("gemm: row stride " + std::string(name) + " = " +
                                std::to_string(ld) + " is below the stored row length " +
                                std::to_string(row_length) + " or beyond the BLAS index range");
  }
}

}  // namespace

std::optional<std::string> blas_refusal(DType dtype, int64_t m, int64_t n, int64_t k) {
  if (dtype != DType::float32 && dtype != DType::float64 && dtype != DType::float16 &&
      dtype != DType::bfloat16) {
    return "gemm: dtype " + dtype_label(dtype) +
           " has no BLAS path; supported: float32, float64, float16, bfloat16";
  }
  if (m < 0 || n < 0 || k < 0) {
    return "gemm: negative size (m " + std::to_string(m) + ", n " + std::to_string(n) + ", k " +
           std::to_string(k) + ")";
  }
  if (m > kBlasMax || n > kBlasMax || k > kBlasMax) {
    return "gemm: size (m " + std::to_string(m) + ", n " + std::to_string(n) + ", k " +
           std::to_string(k) + ") exceeds the 32-bit BLAS index range (" +
           std::to_string(kBlasMax) + ")";
  }
  return std::nullopt;
}

void gemm(DType dtype, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, bool trans_a,
          const void* b, int64_t ldb, bool trans_b, void* d, int64_t ldd) {
  if (const auto reason = blas_refusal(dtype, m, n, k)) throw std::invalid_argument(*reason);
  check_stride("lda", lda, trans_a ? m : k);
  check_stride("ldb", ldb, trans_b ? k : n);
  check_stride("ldd", ldd, n);
  check_buffer("gemm", "a", a, m * k);
  check_buffer("gemm", "b", b, k * n);
  check_buffer("gemm", "d", d, m * n);
  if (m == 0 || n == 0) return;
  const std::size_t elem = dtype_size(dtype);
  if (k == 0) {
    for (int64_t r = 0; r < m; ++r) {
      std::memset(static_cast<std::byte*>(d) + r * ldd * elem, 0, n * elem);
    }
    return;
  }
  const auto bm = static_cast<blasint>(m);
  const auto bn = static_cast<blasint>(n);
  const auto bk = static_cast<blasint>(k);
  switch (dtype) {
    case DType::float32:
      cblas_sgemm(CblasRowMajor, transpose(trans_a), transpose(trans_b), bm, bn, bk, 1.0f,
                  static_cast<const float*>(a), static_cast<blasint>(lda),
                  static_cast<const float*>(b), static_cast<blasint>(ldb), 0.0f,
                  static_cast<float*>(d), static_cast<blasint>(ldd));
      break;
    case DType::float64:
      cblas_dgemm(CblasRowMajor, transpose(trans_a), transpose(trans_b), bm, bn, bk, 1.0,
                  static_cast<const double*>(a), static_cast<blasint>(lda),
                  static_cast<const double*>(b), static_cast<blasint>(ldb), 0.0,
                  static_cast<double*>(d), static_cast<blasint>(ldd));
      break;
    default:
      half_gemm(dtype, m, n, k, a, lda, trans_a, b, ldb, trans_b, d, ldd);
      break;
  }
}

std::optional<std::string> dot_rows_refusal(DType dtype, int64_t m, bool trans_a, bool trans_b) {
  if (dtype != DType::float16 && dtype != DType::bfloat16) {
    return "dot_rows_gemm: dtype " + dtype_label(dtype) + " is served by BLAS; supported: float16, bfloat16";
  }
  if (m > kMaxDotRows) {
    return "dot_rows_gemm: " + std::to_string(m) + " rows of a, more than " + std::to_string(kMaxDotRows) +
           " (gemm's BLAS path serves those)";
  }
  if (trans_a || !trans_b) return std::string("dot_rows_gemm: needs a stored [m, k] and b stored [n, k]");
  return std::nullopt;
}

void dot_rows_gemm(DType dtype, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
                   const void* b, int64_t ldb, void* d, int64_t ldd) {
  if (const auto reason = dot_rows_refusal(dtype, m, false, true)) throw std::invalid_argument(*reason);
  if (m < 0 || n < 0 || k < 0) {
    throw std::invalid_argument("dot_rows_gemm: negative size (m " + std::to_string(m) + ", n " +
                                std::to_string(n) + ", k " + std::to_string(k) + ")");
  }
  check_stride("lda", lda, k);
  check_stride("ldb", ldb, k);
  check_stride("ldd", ldd, n);
  check_buffer("dot_rows_gemm", "a", a, m * k);
  check_buffer("dot_rows_gemm", "b", b, k * n);
  check_buffer("dot_rows_gemm", "d", d, m * n);
  if (m == 0 || n == 0) return;
  const KernelTable& kernels = active_kernels();
  thread_local std::vector<float> a_scratch;
  a_scratch.resize(static_cast<std::size_t>(m * std::max<int64_t>(k, 1)));
  if (k > 0) convert(kernels, dtype, DType::float32, a, lda, a_scratch.data(), k, m, k);
  const float* a_f = a_scratch.data();
  parallel_for(n, std::max<int64_t>(k, 1) * static_cast<int64_t>(dtype_size(dtype)), [&](int64_t n0, int64_t n1) {
    kernels.dot_rows(dtype, a_f, m, k, b, ldb, d, ldd, n0, n1);
  });
}

}  // namespace tileops::cpu
