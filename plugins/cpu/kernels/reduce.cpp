#include <algorithm>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu_kernels.hpp"
#include "kernel_table.hpp"
#include "thread_pool.hpp"
#include "tileops/half.hpp"
#include "validate.hpp"

namespace tileops::cpu {
namespace {

// A reduction this large whose outputs cannot keep every thread busy also splits its reduce
// axis, into parts of at least kMinPartBytes, combined in a second pass.
constexpr int64_t kSplitBytes = int64_t{1} << 20;
constexpr int64_t kMinPartBytes = int64_t{128} << 10;

void check_pair(const char* kernel, DType in, DType out) {
  const bool float_in =
      in == DType::float32 || in == DType::float16 || in == DType::bfloat16 || in == DType::float64;
  const bool ok = out == DType::int64
                      ? in == DType::int32 || in == DType::int64
                      : float_in && (out == in || out == DType::float32 || out == DType::float64);
  if (!ok) {
    throw std::invalid_argument(std::string(kernel) + ": dtypes " + dtype_label(in) + " -> " +
                                dtype_label(out) +
                                " are not supported; supported: float32, float16, bfloat16, "
                                "float64 -> the same, float32 or float64; int32, int64 -> int64");
  }
}

// The dtype partial results are kept in: the precision the output accumulates in.
DType accumulator_dtype(DType out) {
  return out == DType::float64 || out == DType::int64 ? out : DType::float32;
}

void fill(double v, DType out, void* y, int64_t count) {
  switch (out) {
    case DType::float32:
      std::fill_n(static_cast<float*>(y), count, static_cast<float>(v));
      break;
    case DType::float64:
      std::fill_n(static_cast<double*>(y), count, v);
      break;
    case DType::float16:
      std::fill_n(static_cast<Half*>(y), count, Half(static_cast<float>(v)));
      break;
    case DType::bfloat16:
      std::fill_n(static_cast<BFloat16*>(y), count, BFloat16(static_cast<float>(v)));
      break;
    default:
      std::fill_n(static_cast<int64_t*>(y), count, static_cast<int64_t>(v));
      break;
  }
}

// `mean` divides every sum by reduce (0 / 0: NaN when reduce is 0).
void run_reduction(const char* kernel, ReduceOp op, DType in, DType out, int64_t outer,
                   int64_t reduce, int64_t inner, const void* x, void* y, bool mean = false) {
  check_pair(kernel, in, out);
  check_sizes(kernel, {outer, reduce, inner});
  const int64_t outputs = checked_product(kernel, outer, inner);
  const int64_t inputs = checked_product(kernel, outputs, reduce);
  check_buffer(kernel, "x", x, inputs);
  check_buffer(kernel, "y", y, outputs);
  if (outputs == 0) return;
  if (reduce == 0) {
    fill(mean ? std::numeric_limits<double>::quiet_NaN() : op == ReduceOp::sum ? 0.0 : 1.0, out, y, outputs);
    return;
  }
  const double divisor = mean ? static_cast<double>(reduce) : 1.0;
  const KernelTable& kernels = active_kernels();
  const auto in_size = static_cast<int64_t>(dtype_size(in));
  const int64_t items = outer * reduce_column_blocks(inner);
  const int64_t item_bytes = reduce * std::min(inner, kReduceColumnBlock) * in_size;
  const int64_t threads = thread_count();
  const int64_t total_bytes = checked_product(kernel, inputs, in_size);
  int64_t parts = 1;
  if (items < 2 * threads && total_bytes >= kSplitBytes) {
    parts = std::min({reduce, (4 * threads + items - 1) / items, total_bytes / kMinPartBytes});
  }
  if (parts < 2) {
    const ReduceArgs args{op, in, out, x, reduce * inner, y, reduce, inner, divisor};
    parallel_for(items, item_bytes, [&](int64_t i0, int64_t i1) { kernels.reduce(args, i0, i1); });
    return;
  }
  // Part p reduces rows [p * reduce / parts, (p + 1) * reduce / parts) of every slab into
  // partials[p]: [outer, inner] in the accumulator dtype. The second pass reduces the parts,
  // viewing partials as [1, parts, outer * inner].
  const DType acc = accumulator_dtype(out);
  const auto acc_size = static_cast<int64_t>(dtype_size(acc));
  std::vector<double> partials(static_cast<std::size_t>(parts * outputs));
  std::byte* partial_bytes = reinterpret_cast<std::byte*>(partials.data());
  const auto* x_bytes = static_cast<const std::byte*>(x);
  run_tasks(parts * items, [&](int64_t task) {
    const int64_t p = task / items;
    const int64_t item = task % items;
    const int64_t r0 = reduce * p / parts;
    const int64_t r1 = reduce * (p + 1) / parts;
    const ReduceArgs part{op,
                          in,
                          acc,
                          x_bytes + r0 * inner * in_size,
                          reduce * inner,
                          partial_bytes + p * outputs * acc_size,
                          r1 - r0,
                          inner};
    kernels.reduce(part, item, item + 1);
  });
  const ReduceArgs combine{op, acc, out, partial_bytes, parts * outputs, y, parts, outputs, divisor};
  parallel_for(reduce_column_blocks(outputs), parts * kReduceColumnBlock * acc_size,
               [&](int64_t i0, int64_t i1) { kernels.reduce(combine, i0, i1); });
}

}  // namespace

void reduce_sum(DType in_dtype, DType out_dtype, int64_t outer, int64_t reduce, int64_t inner,
                const void* x, void* y) {
  run_reduction("reduce_sum", ReduceOp::sum, in_dtype, out_dtype, outer, reduce, inner, x, y);
}

void reduce_prod(DType in_dtype, DType out_dtype, int64_t outer, int64_t reduce, int64_t inner,
                 const void* x, void* y) {
  run_reduction("reduce_prod", ReduceOp::prod, in_dtype, out_dtype, outer, reduce, inner, x, y);
}

void reduce_mean(DType in_dtype, DType out_dtype, int64_t outer, int64_t reduce, int64_t inner,
                 const void* x, void* y) {
  if (in_dtype == DType::int32 || in_dtype == DType::int64) {
    throw std::invalid_argument("reduce_mean: dtype " + dtype_label(in_dtype) +
                                " is not supported; supported: float32, float16, bfloat16, float64");
  }
  run_reduction("reduce_mean", ReduceOp::sum, in_dtype, out_dtype, outer, reduce, inner, x, y, true);
}

}  // namespace tileops::cpu
