// The GPU kernels' division by a launch-time divisor, checked on the host (the same arithmetic
// as the device's multiply-high).
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "../../plugins/gpu_common/device/fast_divisor.hpp"

using tileops::gpu::FastDivisor;

namespace {

// Numerators near the edges a divisor makes: 0, around each of its first multiples, around
// 2^k, and up to the largest numerator served (2^31 - 1).
std::vector<std::uint32_t> numerators(std::uint32_t d) {
  std::vector<std::uint32_t> n{0, 1, 2, 0x7ffffffeu, 0x7fffffffu};
  for (std::uint64_t k = 1; k <= 3; ++k) {
    for (std::int64_t delta : {-1, 0, 1}) {
      const std::int64_t v = static_cast<std::int64_t>(k * d) + delta;
      if (v >= 0 && v < 0x80000000ll) n.push_back(static_cast<std::uint32_t>(v));
    }
  }
  const std::uint64_t last = (0x7fffffffull / d) * d;  // the largest multiple served
  for (std::uint64_t v : {last - 1, last, last + 1}) {
    if (v < 0x80000000ull) n.push_back(static_cast<std::uint32_t>(v));
  }
  for (int k = 0; k < 31; ++k) {
    const std::uint32_t p = std::uint32_t{1} << k;
    n.push_back(p);
    n.push_back(p - 1);
    n.push_back(p + 1);
  }
  return n;
}

}  // namespace

TEST_CASE("fast division equals integer division for every divisor up to 2^16, large divisors and the numerators at their edges") {
  std::vector<std::uint32_t> divisors;
  for (std::uint32_t d = 1; d <= 65536; ++d) divisors.push_back(d);
  for (std::uint32_t d : {100003u, 1u << 20, (1u << 20) + 1, 0x7fffffffu, 0x80000000u}) divisors.push_back(d);
  std::uint64_t wrong = 0;
  std::uint32_t first_divisor = 0, first_numerator = 0;
  for (std::uint32_t d : divisors) {
    const FastDivisor f(d);
    for (std::uint32_t n : numerators(d)) {
      if (f.quotient(n) != n / d && wrong++ == 0) {
        first_divisor = d;
        first_numerator = n;
      }
    }
  }
  INFO("first wrong quotient: ", first_numerator, " / ", first_divisor);
  CHECK(wrong == 0);
}

TEST_CASE("fast division by small divisors is exact over every numerator below 2^20") {
  for (std::uint32_t d : {1u, 3u, 7u, 16u, 24u, 32u, 48u, 100u, 255u}) {
    const FastDivisor f(d);
    std::uint32_t wrong = 0;
    for (std::uint32_t n = 0; n < (1u << 20); ++n) wrong += f.quotient(n) != n / d;
    INFO("divisor ", d);
    CHECK(wrong == 0);
  }
}
