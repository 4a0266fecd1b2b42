// Host-side 16-bit floating-point storage types and their conversions to and from float.
// Conversions round to nearest even and keep infinities and NaNs.
#pragma once

#include <bit>
#include <cstdint>

namespace tileops {

// IEEE 754 binary16.
struct Half {
  std::uint16_t bits = 0;

  Half() = default;
  explicit Half(float value) : bits(from_float(value)) {}
  explicit operator float() const { return to_float(bits); }

  static constexpr Half from_bits(std::uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }

  static std::uint16_t from_float(float value) {
    const std::uint32_t f = std::bit_cast<std::uint32_t>(value);
    const std::uint32_t sign = (f >> 16) & 0x8000u;
    const std::uint32_t abs = f & 0x7fffffffu;
    if (abs >= 0x7f800000u) {  // inf or NaN; NaN keeps a quiet payload bit
      return static_cast<std::uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
    }
    if (abs >= 0x477ff000u) {  // rounds to a value beyond the largest half: infinity
      return static_cast<std::uint16_t>(sign | 0x7c00u);
    }
    if (abs < 0x38800000u) {  // subnormal or zero in half precision
      // Adding 0.5f aligns the mantissa so that float addition performs the rounding.
      const float shifted = std::bit_cast<float>(abs) + 0.5f;
      return static_cast<std::uint16_t>(sign | (std::bit_cast<std::uint32_t>(shifted) - 0x3f000000u));
    }
    const std::uint32_t mantissa_odd = (abs >> 13) & 1u;
    std::uint32_t rounded = abs + 0xc8000fffu + mantissa_odd;  // rebias exponent and round
    return static_cast<std::uint16_t>(sign | (rounded >> 13));
  }

  static float to_float(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1fu;
    const std::uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0x1fu) {
      return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
    }
    if (exponent == 0) {
      // Subnormal half: value = mantissa * 2^-24, exact in float.
      const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
      return std::bit_cast<float>(sign | std::bit_cast<std::uint32_t>(magnitude));
    }
    return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  }
};

// bfloat16: the upper half of a binary32.
struct BFloat16 {
  std::uint16_t bits = 0;

  BFloat16() = default;
  explicit BFloat16(float value) : bits(from_float(value)) {}
  explicit operator float() const { return to_float(bits); }

  static constexpr BFloat16 from_bits(std::uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }

  static std::uint16_t from_float(float value) {
    const std::uint32_t f = std::bit_cast<std::uint32_t>(value);
    if ((f & 0x7fffffffu) > 0x7f800000u) {  // NaN: keep it quiet rather than round to inf
      return static_cast<std::uint16_t>((f >> 16) | 0x40u);
    }
    const std::uint32_t rounding = 0x7fffu + ((f >> 16) & 1u);
    return static_cast<std::uint16_t>((f + rounding) >> 16);
  }

  static float to_float(std::uint16_t h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }
};

}  // namespace tileops
