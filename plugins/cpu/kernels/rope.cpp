#include <cmath>
#include <vector>

#include "cpu_kernels.hpp"
#include "thread_pool.hpp"
#include "tileops/half.hpp"
#include "validate.hpp"

namespace tileops::cpu {
namespace {

// Sequence rows [r0, r1) of the batch * seq rows: each row's angles once, then every head.
template <class T>
void rotate_rows(const RopeGeometry& g, const int64_t* positions, const std::vector<double>& inv_freq, const T* x,
                 T* y, int64_t r0, int64_t r1) {
  const int64_t d = 2 * g.half;
  const int64_t first_stride = g.interleaved ? 2 : 1;
  const int64_t second_offset = g.interleaved ? 1 : g.half;
  std::vector<float> c(static_cast<size_t>(g.half)), sn(static_cast<size_t>(g.half));
  for (int64_t row = r0; row < r1; ++row) {
    const int64_t b = row / g.seq;
    const int64_t s = row - b * g.seq;
    const double p = static_cast<double>(positions != nullptr ? positions[s] : s);
    for (int64_t i = 0; i < g.half; ++i) {
      const double angle = p * inv_freq[static_cast<size_t>(i)];
      c[static_cast<size_t>(i)] = static_cast<float>(std::cos(angle) * g.scale);
      sn[static_cast<size_t>(i)] = static_cast<float>(std::sin(angle) * g.scale);
    }
    for (int64_t h = 0; h < g.heads; ++h) {
      const int64_t base = (g.heads_first ? (b * g.heads + h) * g.seq + s : row * g.heads + h) * d;
      const T* in = x + base;
      T* out = y + base;
      for (int64_t i = 0; i < g.half; ++i) {
        const int64_t first = i * first_stride;
        const int64_t second = first + second_offset;
        const float a = static_cast<float>(in[first]);
        const float bv = static_cast<float>(in[second]);
        out[first] = static_cast<T>(a * c[static_cast<size_t>(i)] - bv * sn[static_cast<size_t>(i)]);
        out[second] = static_cast<T>(bv * c[static_cast<size_t>(i)] + a * sn[static_cast<size_t>(i)]);
      }
    }
  }
}

}  // namespace

void rope(DType dtype, const RopeGeometry& g, const int64_t* positions, const float* factors, const void* x,
          void* y) {
  constexpr const char* kName = "rope";
  check_float_dtype(kName, dtype);
  check_sizes(kName, {g.batch, g.seq, g.heads, g.half});
  const int64_t rows = checked_product(kName, g.batch, g.seq);
  const int64_t elements = checked_product(kName, rows, checked_product(kName, g.heads, 2 * g.half));
  check_buffer(kName, "x", x, elements);
  check_buffer(kName, "y", y, elements);
  if (elements == 0) return;
  std::vector<double> inv_freq(static_cast<size_t>(g.half));
  for (int64_t i = 0; i < g.half; ++i) {
    inv_freq[static_cast<size_t>(i)] = std::pow(g.theta, -static_cast<double>(i) / static_cast<double>(g.half)) /
                                       (factors != nullptr ? static_cast<double>(factors[i]) : 1.0);
  }
  const auto item_bytes = static_cast<int64_t>(2 * g.heads * 2 * g.half * dtype_size(dtype));
  const auto run = [&]<class T>() {
    parallel_for(rows, item_bytes, [&](int64_t r0, int64_t r1) {
      rotate_rows(g, positions, inv_freq, static_cast<const T*>(x), static_cast<T*>(y), r0, r1);
    });
  };
  switch (dtype) {
    case DType::float16: run.template operator()<Half>(); break;
    case DType::bfloat16: run.template operator()<BFloat16>(); break;
    default: run.template operator()<float>();
  }
}

}  // namespace tileops::cpu
