#include "cpu_kernels.hpp"
#include "kernel_table.hpp"
#include "thread_pool.hpp"
#include "validate.hpp"

namespace tileops::cpu {

void silu_and_mul(DType dtype, int64_t rows, int64_t n, const void* x, void* y) {
  constexpr const char* kName = "silu_and_mul";
  check_float_dtype(kName, dtype);
  check_sizes(kName, {rows, n});
  const int64_t numel = checked_product(kName, rows, checked_product(kName, n, 2));
  check_buffer(kName, "x", x, numel);
  check_buffer(kName, "y", y, numel);
  if (numel == 0) return;
  const KernelTable& kernels = active_kernels();
  // Each output element moves three elements: two read, one written.
  parallel_for_2d(rows, n, static_cast<int64_t>(3 * dtype_size(dtype)), kColumnAlign,
                  [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                    kernels.silu_and_mul(dtype, x, y, n, r0, r1, c0, c1);
                  });
}

void gelu_and_mul(DType dtype, int64_t rows, int64_t n, const void* x, void* y,
                  bool tanh_approximation) {
  constexpr const char* kName = "gelu_and_mul";
  check_float_dtype(kName, dtype);
  check_sizes(kName, {rows, n});
  const int64_t numel = checked_product(kName, rows, checked_product(kName, n, 2));
  check_buffer(kName, "x", x, numel);
  check_buffer(kName, "y", y, numel);
  if (numel == 0) return;
  const KernelTable& kernels = active_kernels();
  parallel_for_2d(rows, n, static_cast<int64_t>(3 * dtype_size(dtype)), kColumnAlign,
                  [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
                    kernels.gelu_and_mul(dtype, tanh_approximation, x, y, n, r0, r1, c0, c1);
                  });
}

namespace {

// Checks a one-input element-wise call of `numel` elements and runs `body(i0, i1)` over ranges
// of them split among the threads.
template <class Body>
void unary_elementwise(const char* name, DType dtype, int64_t numel, const void* x, void* y, Body body) {
  check_float_dtype(name, dtype);
  check_sizes(name, {numel});
  check_buffer(name, "x", x, numel);
  check_buffer(name, "y", y, numel);
  // Each element moves two: one read, one written.
  parallel_for_2d(1, numel, static_cast<int64_t>(2 * dtype_size(dtype)), kColumnAlign,
                  [&](int64_t, int64_t, int64_t i0, int64_t i1) { body(i0, i1); });
}

}  // namespace

void relu(DType dtype, int64_t numel, const void* x, void* y) {
  const KernelTable& kernels = active_kernels();
  unary_elementwise("relu", dtype, numel, x, y, [&](int64_t i0, int64_t i1) { kernels.relu(dtype, x, y, i0, i1); });
}

void gelu(DType dtype, int64_t numel, const void* x, void* y, bool tanh_approximation) {
  const KernelTable& kernels = active_kernels();
  unary_elementwise("gelu", dtype, numel, x, y,
                    [&](int64_t i0, int64_t i1) { kernels.gelu(dtype, tanh_approximation, x, y, i0, i1); });
}

}  // namespace tileops::cpu
