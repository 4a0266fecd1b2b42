#include <stdexcept>
#include <string>
#include <vector>

#include "cpu_kernels.hpp"
#include "kernel_table.hpp"
#include "thread_pool.hpp"
#include "validate.hpp"

namespace tileops::cpu {
namespace {

[[noreturn]] void refuse(const char* kernel, const std::string& what) {
  throw std::invalid_argument(std::string(kernel) + ": " + what);
}

// One dimension of the window: positive sizes, padding within half the kernel, a window span
// within int64, and out windows that all start inside the input or its leading padding.
void check_dimension(const char* kernel, const char* dim, int64_t size, int64_t out, int64_t k, int64_t stride,
                     int64_t padding, int64_t dilation) {
  const std::string d(dim);
  if (k < 1 || stride < 1 || dilation < 1) {
    refuse(kernel, "kernel, stride and dilation along " + d + " must be at least 1, got " + std::to_string(k) + ", " +
                       std::to_string(stride) + " and " + std::to_string(dilation));
  }
  if (padding < 0 || padding > k / 2) {
    refuse(kernel, "padding along " + d + " must lie in [0, " + std::to_string(k / 2) + "], got " + std::to_string(padding));
  }
  // The furthest a window reaches, size + padding + k * dilation, must fit in int64: the
  // kernels add those terms.
  int64_t reach = 0;
  if (__builtin_add_overflow(size, padding, &reach) ||
      __builtin_add_overflow(reach, checked_product(kernel, k, dilation), &reach)) {
    refuse(kernel, "the window along " + d + " reaches past int64");
  }
  if (out < 1) refuse(kernel, "the output's " + d + " must be at least 1, got " + std::to_string(out));
  if (size + padding < 1 || out - 1 > (size + padding - 1) / stride) {
    refuse(kernel, std::to_string(out) + " windows along " + d + " with stride " + std::to_string(stride) +
                       " start past the input (" + std::to_string(size) + " plus padding " + std::to_string(padding) + ")");
  }
}

PoolArgs checked_args(const char* kernel, DType dtype, int64_t planes, int64_t h, int64_t w, int64_t out_h,
                      int64_t out_w, const Pool2dWindow& window, const void* x, void* y) {
  check_float_dtype(kernel, dtype);
  check_sizes(kernel, {planes, h, w, out_h, out_w});
  check_dimension(kernel, "the height", h, out_h, window.kernel_h, window.stride_h, window.padding_h, window.dilation_h);
  check_dimension(kernel, "the width", w, out_w, window.kernel_w, window.stride_w, window.padding_w, window.dilation_w);
  check_buffer(kernel, "x", x, checked_product(kernel, planes, checked_product(kernel, h, w)));
  check_buffer(kernel, "y", y, checked_product(kernel, planes, checked_product(kernel, out_h, out_w)));
  return PoolArgs{dtype, x, y, h, w, out_h, out_w, window};
}

// Splits the output rows of every plane over the threads; each range reduces into a float row
// of its own.
template <class Rows>
void run_rows(const PoolArgs& args, int64_t planes, int64_t kernel_h, Rows rows) {
  const int64_t items = planes * args.out_h;  // within the checked size of y
  if (items == 0 || args.out_w == 0) return;
  // An output row reads kernel_h input rows and writes out_w elements.
  const auto item_bytes = static_cast<int64_t>((kernel_h * args.w + args.out_w) * dtype_size(args.dtype));
  parallel_for(items, item_bytes, [&](int64_t i0, int64_t i1) {
    std::vector<float> row(static_cast<size_t>(args.w));
    rows(args, row.data(), i0, i1);
  });
}

}  // namespace

void max_pool2d(DType dtype, int64_t planes, int64_t h, int64_t w, int64_t out_h, int64_t out_w,
                const Pool2dWindow& window, const void* x, void* y) {
  const PoolArgs args = checked_args("max_pool2d", dtype, planes, h, w, out_h, out_w, window, x, y);
  run_rows(args, planes, window.kernel_h, active_kernels().max_pool2d);
}

void avg_pool2d(DType dtype, int64_t planes, int64_t h, int64_t w, int64_t out_h, int64_t out_w,
                const Pool2dWindow& window, bool count_include_pad, int64_t divisor, const void* x,
                void* y) {
  constexpr const char* kName = "avg_pool2d";
  if (window.dilation_h != 1 || window.dilation_w != 1) refuse(kName, "the window's dilation must be 1");
  PoolArgs args = checked_args(kName, dtype, planes, h, w, out_h, out_w, window, x, y);
  args.count_include_pad = count_include_pad;
  args.divisor = divisor;
  run_rows(args, planes, window.kernel_h, active_kernels().avg_pool2d);
}

}  // namespace tileops::cpu
