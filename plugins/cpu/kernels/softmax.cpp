#include <vector>

#include "cpu_kernels.hpp"
#include "kernel_table.hpp"
#include "thread_pool.hpp"
#include "validate.hpp"

namespace tileops::cpu {

void softmax(DType dtype, int64_t rows, int64_t n, const void* x, void* y) {
  constexpr const char* kName = "softmax";
  check_float_dtype(kName, dtype);
  check_sizes(kName, {rows, n});
  const int64_t numel = checked_product(kName, rows, n);
  check_buffer(kName, "x", x, numel);
  check_buffer(kName, "y", y, numel);
  if (numel == 0) return;
  const KernelTable& kernels = active_kernels();
  const auto row_bytes = static_cast<int64_t>(2 * n * dtype_size(dtype));
  parallel_for(rows, row_bytes, [&](int64_t r0, int64_t r1) {
    thread_local std::vector<float> scratch;
    scratch.resize(static_cast<std::size_t>(n));
    kernels.softmax(dtype, x, y, n, scratch.data(), r0, r1);
  });
}

}  // namespace tileops::cpu
