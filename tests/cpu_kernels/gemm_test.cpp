#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>

#include "support.hpp"

using namespace tileops;
using namespace tileops::cpu;
using namespace tileops::cpu::test;

namespace {

const std::vector<DType> kGemmTypes = {DType::float32, DType::float64, DType::float16,
                                       DType::bfloat16};

// Runs gemm (or dot_rows_gemm, which takes no transposition flags) on random operands stored
// with padded row strides and checks d, and that the padding of d is left alone.
void check_gemm(DType dtype, int64_t m, int64_t n, int64_t k, bool trans_a, bool trans_b,
                int64_t pad, bool dot_rows = false) {
  INFO(name_of(dtype), " m ", m, " n ", n, " k ", k, " trans_a ", trans_a, " trans_b ", trans_b,
       " pad ", pad);
  const int64_t a_rows = trans_a ? k : m, a_cols = trans_a ? m : k;
  const int64_t b_rows = trans_b ? n : k, b_cols = trans_b ? k : n;
  const int64_t lda = a_cols + pad, ldb = b_cols + pad, ldd = n + pad;
  const Buffer a = random_buffer(dtype, a_rows * lda, -1.0, 1.0, 71);
  const Buffer b = random_buffer(dtype, b_rows * ldb, -1.0, 1.0, 72);
  Buffer d = random_buffer(dtype, m * ldd, 5.0, 6.0, 73);
  const Buffer d_before = d;
  if (dot_rows) {
    dot_rows_gemm(dtype, m, n, k, a.data(), lda, b.data(), ldb, d.data(), ldd);
  } else {
    gemm(dtype, m, n, k, a.data(), lda, trans_a, b.data(), ldb, trans_b, d.data(), ldd);
  }
  std::vector<double> want = d_before.values();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        const double av = trans_a ? a.get(p * lda + i) : a.get(i * lda + p);
        const double bv = trans_b ? b.get(j * ldb + p) : b.get(p * ldb + j);
        acc += av * bv;
      }
      want[i * ldd + j] = acc;
    }
  }
  check_close(d, want, tolerance(dtype));
}

}  // namespace

TEST_CASE("gemm matches a double loop for every dtype, transpose pair, odd size and row stride") {
  for_each_isa([](Isa) {
    for (DType dtype : kGemmTypes) {
      for (bool trans_a : {false, true}) {
        for (bool trans_b : {false, true}) {
          for (const auto& [m, n, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
                   {1, 1, 1}, {7, 33, 5}, {33, 7, 65}, {1, 300, 129}, {65, 1, 4097}}) {
            for (int64_t pad : {0, 3}) check_gemm(dtype, m, n, k, trans_a, trans_b, pad);
          }
        }
      }
    }
  });
}

TEST_CASE("half-precision gemm converts operands in blocks when they exceed the scratch budget") {
  // 16 Mi float32 elements per block: 4096-deep operands give blocks of 4096 rows or columns.
  check_gemm(DType::bfloat16, 3, 5000, 4096, false, true, 0);
  check_gemm(DType::float16, 5000, 3, 4096, true, false, 0);
}

TEST_CASE("dot_rows_gemm matches a double loop for every row count up to 8, k tail and row stride") {
  // k = 0, below one vector, with a partial last vector, beyond one piece of a's rows.
  for_each_isa([](Isa) {
    for (DType dtype : {DType::float16, DType::bfloat16}) {
      for (int64_t m = 0; m <= kMaxDotRows; ++m) {
        for (int64_t k : {0, 5, 37, 4096}) check_gemm(dtype, m, 33, k, false, true, 3, true);
      }
    }
  });
}

TEST_CASE("dot_rows_refusal names what dot_rows_gemm does not take, and dot_rows_gemm throws it") {
  CHECK(!dot_rows_refusal(DType::bfloat16, 8, false, true));
  CHECK(dot_rows_refusal(DType::float32, 1, false, true)->find("dtype float32") != std::string::npos);
  CHECK(dot_rows_refusal(DType::float16, 9, false, true)->find("9 rows of a, more than 8") != std::string::npos);
  CHECK(dot_rows_refusal(DType::float16, 1, true, true)->find("a stored [m, k] and b stored [n, k]") !=
        std::string::npos);
  CHECK(dot_rows_refusal(DType::float16, 1, false, false)->find("b stored [n, k]") != std::string::npos);
  const Buffer x = random_buffer(DType::float32, 16, -1.0, 1.0, 1);
  Buffer y = random_buffer(DType::float32, 16, -1.0, 1.0, 2);
  CHECK_THROWS_WITH_AS(dot_rows_gemm(DType::float32, 2, 2, 2, x.data(), 2, x.data(), 2, y.data(), 2),
                       doctest::Contains("dtype float32"), std::invalid_argument);
}

TEST_CASE("gemm with k = 0 writes zeros and with m or n = 0 writes nothing") {
  Buffer d = random_buffer(DType::float16, 6, 1.0, 2.0, 74);
  gemm(DType::float16, 2, 3, 0, nullptr, 1, false, nullptr, 3, false, d.data(), 3);
  check_close(d, std::vector<double>(6, 0.0), 0.0);
  const Buffer b(DType::float32, 12);
  CHECK_NOTHROW(gemm(DType::float32, 0, 3, 4, nullptr, 4, false, b.data(), 3, false, nullptr, 3));
}

TEST_CASE("blas_refusal names unsupported dtypes and sizes beyond the 32-bit BLAS range") {
  CHECK_FALSE(blas_refusal(DType::bfloat16, 4096, 4096, 4096).has_value());
  const auto int_reason = blas_refusal(DType::int32, 2, 2, 2);
  REQUIRE(int_reason.has_value());
  CHECK(int_reason->find("int32") != std::string::npos);
  const auto big = blas_refusal(DType::float32, int64_t{1} << 31, 2, 2);
  REQUIRE(big.has_value());
  CHECK(big->find("32-bit BLAS index range") != std::string::npos);
  CHECK(blas_refusal(DType::float32, 2, -1, 2).has_value());
}

TEST_CASE("gemm throws the refusal reason and rejects row strides below the row length") {
  Buffer x(DType::float32, 16);
  CHECK_THROWS_WITH_AS(
      gemm(DType::int64, 2, 2, 2, x.data(), 2, false, x.data(), 2, false, x.data(), 2),
      doctest::Contains("int64"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      gemm(DType::float32, 2, 2, 3, x.data(), 2, false, x.data(), 2, false, x.data(), 2),
      doctest::Contains("lda"), std::invalid_argument);
}
