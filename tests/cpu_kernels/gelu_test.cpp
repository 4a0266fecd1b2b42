// The cpu gelu body against gelu in double, for both forms, every dtype and every ISA.
//
// Tolerances, in units in the last place (ulp) of the output dtype at the exact value:
// - float32, erf form: 8 ulp. The kernel's error is that of its exp, its reciprocal and a
//   polynomial fitted to 0.4 ulp: about 5 ulp at worst. The portable ISA has no fused
//   multiply-add, so there exp's argument -x^2 / 2 keeps the rounding of x^2 and the error of a
//   negative x grows by up to x^2 / 2 ulp.
// - float32, tanh form: 4 ulp, plus 4 |2u| ulp for negative x, u = sqrt(2 / pi) (x + 0.044715
//   x^3). The result is x * exp(2u) / (1 + exp(2u)); 2u comes out of about four roundings, and
//   exp turns their relative error into an error of up to a few |2u| ulp (measured: 3 |2u|).
//   That is the condition number of gelu there: an input off by one ulp moves the exact result
//   as much.
// - float16 and bfloat16: 1 ulp. The float32 result is within the bounds above, so it rounds to
//   the correctly rounded value or, next to a halfway point, to its neighbour.
// Results below 2^-120 in magnitude are only required to be that small: exp flushes its
// subnormal results to zero on some ISAs.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

#include "support.hpp"

using namespace tileops;
using namespace tileops::cpu;
using namespace tileops::cpu::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kTiny = 0x1p-120;

double tanh_argument(double x) { return std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x); }

double gelu_exact(double x, bool tanh_form) {
  if (x == -kInf) return -0.0;
  if (tanh_form) return x / (1.0 + std::exp(-2.0 * tanh_argument(x)));
  return x * 0.5 * std::erfc(-x * std::sqrt(0.5));
}

// The ulp of dtype at w: 2^(exponent of w - mantissa bits), subnormals included.
double ulp_at(DType dtype, double w) {
  const int digits = dtype == DType::float32 ? 24 : dtype == DType::float16 ? 11 : 8;
  const int min_exponent = dtype == DType::float16 ? -14 : -126;
  const int exponent = w == 0.0 ? min_exponent : std::max(std::ilogb(w), min_exponent);
  return std::ldexp(1.0, exponent - (digits - 1));
}

double allowed_ulps(DType dtype, double x, bool tanh_form, Isa isa) {
  if (dtype != DType::float32) return 1.0;
  if (tanh_form) return x < 0.0 ? 4.0 + 4.0 * std::fabs(2.0 * tanh_argument(x)) : 4.0;
  return isa == Isa::portable && x < 0.0 ? 8.0 + x * x / 2.0 : 8.0;
}

// Every y[i] against gelu(x[i]) within allowed_ulps; NaN for NaN, infinities and zeros exactly
// (sign included). Reports the worst index once.
void check_gelu(const Buffer& x, const Buffer& y, bool tanh_form, Isa isa) {
  REQUIRE(x.size() == y.size());
  int64_t worst = -1;
  double worst_ratio = 1.0;
  for (int64_t i = 0; i < x.size(); ++i) {
    const double want = gelu_exact(x.get(i), tanh_form);
    const double got = y.get(i);
    bool ok;
    double ratio = 0.0;
    if (std::isnan(want)) {
      ok = std::isnan(got);
    } else if (std::isinf(want) || want == 0.0) {
      ok = got == want && std::signbit(got) == std::signbit(want);
    } else if (std::fabs(want) < kTiny) {
      ok = std::fabs(got) <= kTiny && (got == 0.0 || std::signbit(got) == std::signbit(want));
    } else {
      ratio = std::fabs(got - want) / ulp_at(y.dtype(), want) / allowed_ulps(y.dtype(), x.get(i), tanh_form, isa);
      ok = ratio <= 1.0;
    }
    if (!ok && (worst < 0 || ratio > worst_ratio)) {
      worst = i;
      worst_ratio = ratio;
    }
  }
  if (worst >= 0) {
    const double want = gelu_exact(x.get(worst), tanh_form);
    FAIL_CHECK(name_of(y.dtype()) << std::string(tanh_form ? " tanh" : " erf") << " index " << worst << " of " << x.size()
                                  << ": gelu(" << x.get(worst) << ") gave " << y.get(worst) << ", want " << want
                                  << " (" << worst_ratio << " times the allowed error)");
  }
}

Buffer gelu_of(const Buffer& x, bool tanh_form) {
  Buffer y(x.dtype(), x.size());
  gelu(x.dtype(), x.size(), x.data(), y.data(), tanh_form);
  return y;
}

}  // namespace

TEST_CASE("gelu float32 stays within its ulp bounds over every 1/1024 step of [-20, 20]") {
  Buffer x(DType::float32, 40 * 1024 + 1);
  for (int64_t i = 0; i < x.size(); ++i) x.set(i, -20.0 + static_cast<double>(i) / 1024.0);
  for_each_isa([&](Isa isa) {
    for (bool tanh_form : {false, true}) check_gelu(x, gelu_of(x, tanh_form), tanh_form, isa);
  });
}

TEST_CASE("gelu matches gelu in double for every dtype, form and ISA, at lengths with partial vectors") {
  for_each_isa([](Isa isa) {
    for (DType dtype : kFloatTypes) {
      for (int64_t numel : {int64_t{1}, int64_t{7}, int64_t{15}, int64_t{16}, int64_t{17}, int64_t{33}, int64_t{4097},
                            (int64_t{1} << 20) + 3}) {
        INFO(name_of(dtype), " numel ", numel);
        const Buffer x = random_buffer(dtype, numel, -8.0, 8.0, 31);
        for (bool tanh_form : {false, true}) check_gelu(x, gelu_of(x, tanh_form), tanh_form, isa);
      }
    }
  });
}

TEST_CASE("gelu keeps NaN and the sign of zero, gives x for large x, -0 for large negative x and the limits at inf") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> specials = {0.0,  -0.0, 10.0, -10.0, 30.0,  -30.0,   kInf,
                                        -kInf, nan,  1e-30, -1e-30, 65504.0, -65504.0};
  const auto n = static_cast<int64_t>(specials.size());
  for_each_isa([&](Isa isa) {
    for (DType dtype : kFloatTypes) {
      // The values at the start, in full vectors, and again at the end, in the last partial
      // vector of every ISA.
      Buffer x = random_buffer(dtype, 2 * n + 3, -3.0, 3.0, 32);
      for (int64_t k = 0; k < n; ++k) {
        x.set(k, specials[k]);
        x.set(n + 3 + k, specials[k]);
      }
      INFO(name_of(dtype));
      for (bool tanh_form : {false, true}) {
        const Buffer y = gelu_of(x, tanh_form);
        check_gelu(x, y, tanh_form, isa);
        for (int64_t at : {int64_t{0}, n + 3}) {
          CHECK((y.get(at) == 0.0 && !std::signbit(y.get(at))));
          CHECK((y.get(at + 1) == 0.0 && std::signbit(y.get(at + 1))));
          CHECK(y.get(at + 2) == 10.0);
          CHECK(y.get(at + 4) == 30.0);
          CHECK((y.get(at + 5) == 0.0 && std::signbit(y.get(at + 5))));
          CHECK(y.get(at + 6) == kInf);
          CHECK((y.get(at + 7) == 0.0 && std::signbit(y.get(at + 7))));
          CHECK(std::isnan(y.get(at + 8)));
        }
      }
    }
  });
}

TEST_CASE("gelu in place writes what it writes out of place") {
  for_each_isa([](Isa) {
    for (DType dtype : kFloatTypes) {
      for (bool tanh_form : {false, true}) {
        const Buffer x = random_buffer(dtype, 100003, -6.0, 6.0, 33);
        Buffer in_place = x;
        gelu(dtype, x.size(), in_place.data(), in_place.data(), tanh_form);
        CHECK(in_place.same_bytes(gelu_of(x, tanh_form)));
      }
    }
  });
}

TEST_CASE("gelu of no elements touches nothing and accepts null buffers") {
  for (DType dtype : kFloatTypes) CHECK_NOTHROW(gelu(dtype, 0, nullptr, nullptr, true));
}

TEST_CASE("gelu rejects dtypes other than float32, float16 and bfloat16, negative sizes and null buffers") {
  Buffer x(DType::float64, 8);
  CHECK_THROWS_WITH_AS(gelu(DType::float64, 8, x.data(), x.data(), false), doctest::Contains("gelu: dtype float64"),
                       std::invalid_argument);
  CHECK_THROWS_AS(gelu(DType::int32, 8, x.data(), x.data(), false), std::invalid_argument);
  CHECK_THROWS_AS(gelu(DType::float32, -1, x.data(), x.data(), false), std::invalid_argument);
  CHECK_THROWS_AS(gelu(DType::float32, 8, nullptr, x.data(), false), std::invalid_argument);
}
