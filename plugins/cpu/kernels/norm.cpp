#include "cpu_kernels.hpp"
#include "kernel_table.hpp"
#include "thread_pool.hpp"
#include "validate.hpp"

namespace tileops::cpu {
namespace {

// Checks the arguments every row normalisation shares; returns false when there is nothing to do.
bool check_rows(const char* kernel, DType dtype, int64_t rows, int64_t n, const void* x, void* y) {
  check_float_dtype(kernel, dtype);
  check_sizes(kernel, {rows, n});
  const int64_t numel = checked_product(kernel, rows, n);
  check_buffer(kernel, "x", x, numel);
  check_buffer(kernel, "y", y, numel);
  return numel > 0;
}

}  // namespace

void rms_norm(DType dtype, int64_t rows, int64_t n, const void* x, const void* weight, void* y,
              double eps) {
  if (!check_rows("rms_norm", dtype, rows, n, x, y)) return;
  const KernelTable& kernels = active_kernels();
  const auto eps_f = static_cast<float>(eps);
  const auto row_bytes = static_cast<int64_t>(2 * n * dtype_size(dtype));
  parallel_for(rows, row_bytes, [&](int64_t r0, int64_t r1) {
    kernels.rms_norm(dtype, x, weight, y, n, eps_f, r0, r1);
  });
}

void fused_add_rms_norm(DType dtype, int64_t rows, int64_t n, const void* x, void* residual,
                        const void* weight, void* y, double eps) {
  if (!check_rows("fused_add_rms_norm", dtype, rows, n, x, y)) return;
  check_buffer("fused_add_rms_norm", "residual", residual, rows * n);
  check_buffer("fused_add_rms_norm", "weight", weight, n);
  const KernelTable& kernels = active_kernels();
  const auto eps_f = static_cast<float>(eps);
  // Each element moves four: x and residual read, residual and y written.
  const auto row_bytes = static_cast<int64_t>(4 * n * dtype_size(dtype));
  parallel_for(rows, row_bytes, [&](int64_t r0, int64_t r1) {
    kernels.fused_add_rms_norm(dtype, x, residual, weight, y, n, eps_f, r0, r1);
  });
}

void layer_norm(DType dtype, int64_t rows, int64_t n, const void* x, const void* weight,
                const void* bias, void* y, double eps) {
  if (!check_rows("layer_norm", dtype, rows, n, x, y)) return;
  const KernelTable& kernels = active_kernels();
  const auto eps_f = static_cast<float>(eps);
  const auto row_bytes = static_cast<int64_t>(2 * n * dtype_size(dtype));
  parallel_for(rows, row_bytes, [&](int64_t r0, int64_t r1) {
    kernels.layer_norm(dtype, x, weight, bias, y, n, eps_f, r0, r1);
  });
}

}  // namespace tileops::cpu
