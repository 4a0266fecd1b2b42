// Buffers of any dtype, random inputs, tolerance checks and ISA loops for the kernel tests.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cpu_kernels.hpp"
#include "tileops/dtype.hpp"
#include "tileops/half.hpp"

namespace tileops::cpu::test {

inline const std::vector<DType> kFloatTypes = {DType::float32, DType::float16, DType::bfloat16};
inline const std::vector<int64_t> kOddSizes = {1, 7, 33, 4097};

inline std::string name_of(DType dtype) {
  switch (dtype) {
    case DType::float32:
      return "float32";
    case DType::float16:
      return "float16";
    case DType::bfloat16:
      return "bfloat16";
    case DType::float64:
      return "float64";
    case DType::int32:
      return "int32";
    case DType::int64:
      return "int64";
    default:
      return "other";
  }
}

// A contiguous buffer of `size` elements of `dtype`, read and written as doubles.
class Buffer {
 public:
  Buffer(DType dtype, int64_t size)
      : dtype_(dtype), size_(size), bytes_(static_cast<std::size_t>(size) * dtype_size(dtype)) {}

  DType dtype() const { return dtype_; }
  int64_t size() const { return size_; }
  void* data() { return bytes_.data(); }
  const void* data() const { return bytes_.data(); }

  double get(int64_t i) const {
    const std::byte* p = bytes_.data() + i * static_cast<int64_t>(dtype_size(dtype_));
    switch (dtype_) {
      case DType::float32:
        return load<float>(p);
      case DType::float64:
        return load<double>(p);
      case DType::float16:
        return Half::to_float(load<std::uint16_t>(p));
      case DType::bfloat16:
        return BFloat16::to_float(load<std::uint16_t>(p));
      case DType::int32:
        return load<int32_t>(p);
      case DType::int64:
        return static_cast<double>(load<int64_t>(p));
      default:
        FAIL("unexpected dtype");
        return 0;
    }
  }

  int64_t get_int(int64_t i) const {
    const std::byte* p = bytes_.data() + i * static_cast<int64_t>(dtype_size(dtype_));
    return dtype_ == DType::int32 ? load<int32_t>(p) : load<int64_t>(p);
  }

  // Stores v rounded to the dtype.
  void set(int64_t i, double v) {
    std::byte* p = bytes_.data() + i * static_cast<int64_t>(dtype_size(dtype_));
    switch (dtype_) {
      case DType::float32:
        return store(p, static_cast<float>(v));
      case DType::float64:
        return store(p, v);
      case DType::float16:
        return store(p, Half::from_float(static_cast<float>(v)));
      case DType::bfloat16:
        return store(p, BFloat16::from_float(static_cast<float>(v)));
      case DType::int32:
        return store(p, static_cast<int32_t>(v));
      case DType::int64:
        return store(p, static_cast<int64_t>(v));
      default:
        FAIL("unexpected dtype");
    }
  }

  std::vector<double> values() const {
    std::vector<double> out(static_cast<std::size_t>(size_));
    for (int64_t i = 0; i < size_; ++i) out[i] = get(i);
    return out;
  }

  bool same_bytes(const Buffer& other) const { return bytes_ == other.bytes_; }

 private:
  template <class T>
  static T load(const std::byte* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  template <class T>
  static void store(std::byte* p, T v) {
    std::memcpy(p, &v, sizeof v);
  }

  DType dtype_;
  int64_t size_;
  std::vector<std::byte> bytes_;
};

// Uniform values in [lo, hi), rounded to the dtype; the same seed gives the same values.
inline Buffer random_buffer(DType dtype, int64_t size, double lo, double hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Buffer b(dtype, size);
  for (int64_t i = 0; i < size; ++i) b.set(i, dist(rng));
  return b;
}

// The relative tolerance of a result rounded to dtype and computed in float32.
inline double tolerance(DType dtype) {
  switch (dtype) {
    case DType::float32:
      return 1e-5;
    case DType::float64:
      return 1e-10;
    default:
      return 1e-2;
  }
}

// Checks |got - want| <= rtol * |want| + atol_scale * rtol * max|want| at every index and reports
// the worst index once.
inline void check_close(const Buffer& got, const std::vector<double>& want, double rtol,
                        double atol_scale = 0.1) {
  REQUIRE(got.size() == static_cast<int64_t>(want.size()));
  double scale = 0.0;
  for (double w : want) scale = std::max(scale, std::fabs(w));
  const double atol = atol_scale * rtol * scale;
  int64_t worst = -1;
  double worst_excess = 0.0;
  for (int64_t i = 0; i < got.size(); ++i) {
    const double g = got.get(i);
    const double w = want[i];
    if (std::isnan(w) || std::isinf(w)) {
      if (!(std::isnan(w) ? std::isnan(g) : g == w) && worst < 0) worst = i;
      continue;
    }
    const double excess = std::fabs(g - w) - (rtol * std::fabs(w) + atol);
    if (!(excess <= 0.0) && (worst < 0 || excess > worst_excess)) {
      worst = i;
      worst_excess = excess;
    }
  }
  if (worst >= 0) {
    FAIL_CHECK("index " << worst << " of " << got.size() << ": got " << got.get(worst) << ", want "
                        << want[worst] << " (rtol " << rtol << ", atol " << atol << ")");
  }
}

// Runs body() once with each given instruction set this CPU has forced, then restores the default.
template <class F>
void for_isas(bool with_amx, F&& body) {
  struct Reset {
    ~Reset() { reset_isa(); }
  } reset;
  for (Isa isa : available_isas()) {
    if (isa == Isa::amx && !with_amx) continue;
    force_isa(isa);
    INFO("isa ", std::string(isa_name(isa)));
    body(isa);
  }
}

// Every instruction set this CPU has but amx, whose table is avx512's outside attention (the
// "amx differs from avx512 only in attention" case checks that): running it again would only
// repeat avx512's cases.
template <class F>
void for_each_isa(F&& body) {
  for_isas(false, body);
}

// Every instruction set this CPU has, amx included: for the attention kernels.
template <class F>
void for_each_attention_isa(F&& body) {
  for_isas(true, body);
}

}  // namespace tileops::cpu::test
