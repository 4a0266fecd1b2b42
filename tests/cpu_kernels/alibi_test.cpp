#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "support.hpp"

using namespace tileops;
using namespace tileops::cpu;
using namespace tileops::cpu::test;

namespace {

// The slopes as the ALiBi reference code builds them: a geometric sequence for the largest power
// of two p <= heads, then every other term of the sequence for 2p.
std::vector<double> reference_slopes(int64_t heads) {
  const auto geometric = [](int64_t n) {
    const double start = std::pow(2.0, -std::pow(2.0, -(std::log2(static_cast<double>(n)) - 3)));
    std::vector<double> s;
    for (int64_t i = 0; i < n; ++i) s.push_back(start * std::pow(start, static_cast<double>(i)));
    return s;
  };
  const auto p = static_cast<int64_t>(std::exp2(std::floor(std::log2(static_cast<double>(heads)))));
  std::vector<double> slopes = geometric(p);
  const std::vector<double> doubled = geometric(2 * p);
  for (int64_t i = 0; i < heads - p; ++i) slopes.push_back(doubled[2 * i]);
  return slopes;
}

}  // namespace

TEST_CASE("alibi_slopes follow the paper for powers of two and other head counts") {
  for (int64_t heads : {1, 2, 8, 12, 32, 40, 64, 96}) {
    INFO("heads ", heads);
    const std::vector<double> got = alibi_slopes(heads);
    const std::vector<double> want = reference_slopes(heads);
    REQUIRE(got.size() == want.size());
    for (std::size_t h = 0; h < got.size(); ++h)
      CHECK(got[h] == doctest::Approx(want[h]).epsilon(1e-12));
  }
  CHECK(alibi_slopes(8)[0] == 0.5);
  CHECK(alibi_slopes(8)[7] == 1.0 / 256);
}

TEST_CASE("alibi writes slope_h * (j - i) for every dtype, ISA and odd length") {
  for_each_isa([](Isa) {
    for (DType dtype : kFloatTypes) {
      for (int64_t heads : {1, 5, 12}) {
        for (int64_t seq : {1, 7, 33, 300}) {
          INFO(name_of(dtype), " heads ", heads, " seq ", seq);
          Buffer y(dtype, heads * seq * seq);
          alibi(dtype, heads, seq, y.data());
          const std::vector<double> slopes = reference_slopes(heads);
          std::vector<double> want(static_cast<std::size_t>(y.size()));
          for (int64_t h = 0; h < heads; ++h) {
            for (int64_t i = 0; i < seq; ++i) {
              for (int64_t j = 0; j < seq; ++j) {
                want[(h * seq + i) * seq + j] = slopes[h] * static_cast<double>(j - i);
              }
            }
          }
          check_close(y, want, tolerance(dtype), 0.0);
        }
      }
    }
  });
}

TEST_CASE("alibi of a long sequence splits columns and stays exact") {
  for_each_isa([](Isa) {
    const int64_t seq = 3000;
    Buffer y(DType::float32, seq * seq);
    alibi(DType::float32, 1, seq, y.data());
    CHECK(y.get(seq - 1) == doctest::Approx(0.00390625 * (seq - 1)));
    CHECK(y.get((seq - 1) * seq) == doctest::Approx(-0.00390625 * (seq - 1)));
    CHECK(y.get(1234 * seq + 1234) == 0.0);
  });
}

TEST_CASE("alibi rejects integer dtypes and sequences beyond float32's exact integers") {
  CHECK_THROWS_AS(alibi(DType::int32, 1, 4, nullptr), std::invalid_argument);
  CHECK_THROWS_WITH_AS(alibi(DType::float32, 1, (int64_t{1} << 24) + 1, nullptr),
                       doctest::Contains("2^24"), std::invalid_argument);
}
