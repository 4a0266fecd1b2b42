#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "tileops/dtype.hpp"
#include "tileops/errors.hpp"
#include "tileops/half.hpp"

using namespace tileops;

TEST_CASE("dtype names round-trip and aliases resolve") {
  for (DType d : all_dtypes()) CHECK(parse_dtype(dtype_name(d)) == d);
  CHECK(parse_dtype("half") == DType::float16);
  CHECK(parse_dtype("bf16") == DType::bfloat16);
  CHECK(parse_dtype("float") == DType::float32);
  CHECK(dtype_name(DType::bool_) == "bool");
}

TEST_CASE("an unknown dtype name is a ValueError that lists the accepted names") {
  CHECK_THROWS_WITH_AS(parse_dtype("float8"), doctest::Contains("unknown dtype 'float8'"), ValueError);
  CHECK_THROWS_WITH_AS(parse_dtype("complex64"), doctest::Contains("bfloat16"), ValueError);
}

TEST_CASE("dtype sizes and categories") {
  CHECK(dtype_bits(DType::bfloat16) == 16);
  CHECK(dtype_size(DType::int64) == 8);
  CHECK(dtype_size(DType::bool_) == 1);
  CHECK(is_floating(DType::float16));
  CHECK_FALSE(is_floating(DType::int32));
  CHECK(is_integral(DType::uint8));
  CHECK(dtype_category(DType::bool_) == "bool");
  CHECK(dtype_category(DType::int8) == "int");
  CHECK(dtype_category(DType::bfloat16) == "float");
}

TEST_CASE("half conversion is exact on representable values and rounds to nearest even") {
  CHECK(static_cast<float>(Half(1.0f)) == 1.0f);
  CHECK(static_cast<float>(Half(-2.5f)) == -2.5f);
  CHECK(static_cast<float>(Half(65504.0f)) == 65504.0f);
  CHECK(Half(1.0f).bits == 0x3c00);
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties go to the even mantissa (1.0).
  CHECK(Half(1.0f + std::ldexp(1.0f, -11)).bits == 0x3c00);
  // 1 + 3 * 2^-11 lies halfway between 1 + 2^-10 and 1 + 2^-9: ties go to even (1 + 2^-9).
  CHECK(Half(1.0f + 3 * std::ldexp(1.0f, -11)).bits == 0x3c02);
  // Subnormals: the smallest positive half is 2^-24.
  CHECK(static_cast<float>(Half(std::ldexp(1.0f, -24))) == std::ldexp(1.0f, -24));
  CHECK(Half(std::ldexp(1.0f, -26)).bits == 0);
  CHECK(static_cast<float>(Half::from_bits(0x0001)) == std::ldexp(1.0f, -24));
}

TEST_CASE("half conversion saturates to infinity and keeps NaN") {
  CHECK(Half(65520.0f).bits == 0x7c00);
  CHECK(Half(1e10f).bits == 0x7c00);
  CHECK(Half(-1e10f).bits == 0xfc00);
  CHECK(std::isinf(static_cast<float>(Half(std::numeric_limits<float>::infinity()))));
  CHECK(std::isnan(static_cast<float>(Half(std::numeric_limits<float>::quiet_NaN()))));
}

TEST_CASE("every half bit pattern survives a round trip through float") {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const Half h = Half::from_bits(static_cast<std::uint16_t>(b));
    const float f = static_cast<float>(h);
    if (std::isnan(f)) continue;
    REQUIRE(Half(f).bits == h.bits);
  }
}

TEST_CASE("bfloat16 conversion rounds to nearest even and keeps NaN") {
  CHECK(static_cast<float>(BFloat16(1.0f)) == 1.0f);
  CHECK(BFloat16(1.0f).bits == 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even keeps 1.
  CHECK(BFloat16(1.0f + std::ldexp(1.0f, -8)).bits == 0x3f80);
  CHECK(BFloat16(1.0f + 3 * std::ldexp(1.0f, -8)).bits == 0x3f82);
  CHECK(std::isnan(static_cast<float>(BFloat16(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(std::isinf(static_cast<float>(BFloat16(std::numeric_limits<float>::infinity()))));
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const BFloat16 h = BFloat16::from_bits(static_cast<std::uint16_t>(b));
    const float f = static_cast<float>(h);
    if (std::isnan(f)) continue;
    REQUIRE(BFloat16(f).bits == h.bits);
  }
}
