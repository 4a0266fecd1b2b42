// Division by a divisor fixed at launch, as a multiply-high, an add and a shift (the round-up
// method of Granlund and Montgomery): a kernel that divides a position by a runtime size for
// every row it copies (a paged cache's block size) spends three instructions where a 32-bit
// division spends about twenty. Made on the host, passed to the kernel by value. Plain C++ with
// no GPU header, so the host's tests check it against `/` over every divisor they care about.
#pragma once

#include <cstdint>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define TILEOPS_HOST_DEVICE __host__ __device__
#else
#define TILEOPS_HOST_DEVICE
#endif

namespace tileops::gpu {

struct FastDivisor {
  std::uint32_t divisor = 1;
  std::uint32_t magic = 1;  // divisor 1: (mulhi(n, 1) + n) >> 0 == n
  std::uint32_t shift = 0;

  FastDivisor() = default;

  // A divisor in [1, 2^31]; quotient() is exact for numerators in [0, 2^31).
  explicit FastDivisor(std::uint32_t d) : divisor(d) {
    while ((std::uint64_t{1} << shift) < d) ++shift;  // ceil(log2 d)
    // 2^l - d < d <= 2^31, so the product stays below 2^63, and the magic below 2^32.
    magic = static_cast<std::uint32_t>((std::uint64_t{1} << 32) * ((std::uint64_t{1} << shift) - d) / d + 1);
  }

  // n / divisor for n < 2^31 (the sum below then stays under 2^32).
  TILEOPS_HOST_DEVICE std::uint32_t quotient(std::uint32_t n) const {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    const std::uint32_t high = __umulhi(n, magic);
#else
    const auto high = static_cast<std::uint32_t>((static_cast<std::uint64_t>(n) * magic) >> 32);
#endif
    return (high + n) >> shift;
  }
};

}  // namespace tileops::gpu
