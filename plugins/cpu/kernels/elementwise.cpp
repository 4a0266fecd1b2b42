#include <cmath>
#include <stdexcept>
#include <string>

#include "cpu_kernels.hpp"
#include "kernel_table.hpp"
#include "thread_pool.hpp"
#include "validate.hpp"

namespace tileops::cpu {
namespace {

void check_add(const char* kernel, DType dtype, double alpha) {
  check_dtype(kernel, dtype,
              {DType::float32, DType::float16, DType::bfloat16, DType::int32, DType::int64});
  // 2^63 is the first double beyond int64_t.
  if (is_integral(dtype) &&
      (alpha != std::trunc(alpha) || std::fabs(alpha) >= 9.2233720368547758e18)) {
    throw std::invalid_argument(std::string(kernel) + ": alpha " + std::to_string(alpha) +
                                " is not an int64 value, as integer dtypes need");
  }
}

}  // namespace

void add(DType dtype, int64_t numel, const void* a, const void* b, void* y, double alpha) {
  constexpr const char* kName = "add";
  check_add(kName, dtype, alpha);
  check_sizes(kName, {numel});
  check_buffer(kName, "a", a, numel);
  check_buffer(kName, "b", b, numel);
  check_buffer(kName, "y", y, numel);
  const KernelTable& kernels = active_kernels();
  parallel_for_2d(1, numel, static_cast<int64_t>(3 * dtype_size(dtype)), kColumnAlign,
                  [&](int64_t, int64_t, int64_t i0, int64_t i1) {
                    kernels.add(dtype, a, b, y, alpha, i0, i1);
                  });
}

void add_row_broadcast(DType dtype, int64_t rows, int64_t n, const void* a, const void* b_row,
                       void* y, double alpha) {
  constexpr const char* kName = "add_row_broadcast";
  check_add(kName, dtype, alpha);
  check_sizes(kName, {rows, n});
  const int64_t numel = checked_product(kName, rows, n);
  check_buffer(kName, "a", a, numel);
  check_buffer(kName, "b_row", b_row, numel);
  check_buffer(kName, "y", y, numel);
  const KernelTable& kernels = active_kernels();
  parallel_for_2d(rows, n, static_cast<int64_t>(2 * dtype_size(dtype)), kColumnAlign,
                  [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                    kernels.add_row_broadcast(dtype, a, b_row, y, alpha, n, r0, r1, c0, c1);
                  });
}

}  // namespace tileops::cpu
