#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu_kernels.hpp"
#include "kernel_table.hpp"
#include "thread_pool.hpp"
#include "validate.hpp"

namespace tileops::cpu {

std::vector<double> alibi_slopes(int64_t num_heads) {
  std::vector<double> slopes;
  if (num_heads <= 0) return slopes;
  int64_t power = 1;
  while (power <= num_heads / 2) power *= 2;  // power * 2 <= num_heads, without overflow
  const auto p = static_cast<double>(power);
  for (int64_t h = 0; h < power; ++h)
    slopes.push_back(std::exp2(-8.0 * static_cast<double>(h + 1) / p));
  // The heads beyond the power of two take the odd-numbered slopes of 2 * power heads.
  for (int64_t i = 0; i < num_heads - power; ++i) {
    slopes.push_back(std::exp2(-4.0 * static_cast<double>(2 * i + 1) / p));
  }
  return slopes;
}

void alibi(DType dtype, int64_t num_heads, int64_t seq_len, void* y) {
  constexpr const char* kName = "alibi";
  check_float_dtype(kName, dtype);
  check_sizes(kName, {num_heads, seq_len});
  // Distances are computed in float32, exact only below 2^24.
  if (seq_len > (int64_t{1} << 24)) {
    throw std::invalid_argument("alibi: seq_len " + std::to_string(seq_len) +
                                " is beyond 2^24, where float32 distances stop being exact");
  }
  const int64_t rows = checked_product(kName, num_heads, seq_len);
  check_buffer(kName, "y", y, checked_product(kName, rows, seq_len));
  if (rows == 0) return;
  const std::vector<double> slopes = alibi_slopes(num_heads);
  const std::vector<float> slopes_f(slopes.begin(), slopes.end());
  const KernelTable& kernels = active_kernels();
  parallel_for_2d(rows, seq_len, static_cast<int64_t>(dtype_size(dtype)), kColumnAlign,
                  [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                    kernels.alibi(dtype, slopes_f.data(), seq_len, y, r0, r1, c0, c1);
                  });
}

}  // namespace tileops::cpu
