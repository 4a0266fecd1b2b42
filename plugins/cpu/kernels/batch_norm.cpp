#include <algorithm>
#include <cmath>
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

// With inner == 1, batch rows are summed in float32 over chunks of at most this many rows before
// the chunk sums are added in float64.
constexpr int64_t kStatRowChunk = 256;
// Channels one statistics task covers when inner == 1.
constexpr int64_t kStatChannelBlock = 512;
// A channel of at most this many bytes is summed and normalised by one task while it stays in
// the core's cache.
constexpr int64_t kFusedChannelBytes = int64_t{512} << 10;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Checks the arguments both batch norms share; returns false when there is nothing to do.
bool check_batch_norm(const char* kernel, DType dtype, int64_t N, int64_t C, int64_t inner,
                      const void* x, const void* y) {
  check_float_dtype(kernel, dtype);
  check_sizes(kernel, {N, C, inner});
  const int64_t numel = checked_product(kernel, checked_product(kernel, N, C), inner);
  check_buffer(kernel, "x", x, numel);
  check_buffer(kernel, "y", y, numel);
  return numel > 0;
}

float element_as_float(DType dtype, const void* x, int64_t index) {
  switch (dtype) {
    case DType::float16:
      return static_cast<float>(static_cast<const Half*>(x)[index]);
    case DType::bfloat16:
      return static_cast<float>(static_cast<const BFloat16*>(x)[index]);
    default:
      return static_cast<const float*>(x)[index];
  }
}

// y = (x - center[c]) * scale[c] + shift[c].
void apply(const KernelTable& kernels, DType dtype, int64_t N, int64_t C, int64_t inner,
           const void* x, void* y, const std::vector<float>& center,
           const std::vector<float>& scale, const std::vector<float>& shift) {
  const auto elem = static_cast<int64_t>(dtype_size(dtype));
  const int64_t rows = inner == 1 ? N : N * C;
  const int64_t row_len = inner == 1 ? C : inner;
  parallel_for(rows, 2 * row_len * elem, [&](int64_t i0, int64_t i1) {
    kernels.batch_norm_apply(dtype, x, y, C, inner, center.data(), scale.data(), shift.data(), i0,
                             i1);
  });
}

}  // namespace

void batch_norm_infer(DType dtype, int64_t N, int64_t C, int64_t inner, const void* x,
                      const float* running_mean, const float* running_var, const float* weight,
                      const float* bias, void* y, double eps) {
  constexpr const char* kName = "batch_norm_infer";
  if (!check_batch_norm(kName, dtype, N, C, inner, x, y)) return;
  check_buffer(kName, "running_mean", running_mean, C);
  check_buffer(kName, "running_var", running_var, C);
  std::vector<float> center(static_cast<std::size_t>(C));
  std::vector<float> scale(center.size());
  std::vector<float> shift(center.size());
  for (int64_t c = 0; c < C; ++c) {
    const double rstd = 1.0 / std::sqrt(static_cast<double>(running_var[c]) + eps);
    center[c] = running_mean[c];
    scale[c] = static_cast<float>(weight != nullptr ? weight[c] * rstd : rstd);
    shift[c] = bias != nullptr ? bias[c] : 0.0f;
  }
  apply(active_kernels(), dtype, N, C, inner, x, y, center, scale, shift);
}

void batch_norm_train(DType dtype, int64_t N, int64_t C, int64_t inner, const void* x,
                      const float* weight, const float* bias, void* y, float* mean_out,
                      float* rstd_out, float* running_mean, float* running_var, double momentum,
                      double eps) {
  constexpr const char* kName = "batch_norm_train";
  if (!check_batch_norm(kName, dtype, N, C, inner, x, y)) return;
  check_buffer(kName, "mean_out", mean_out, C);
  check_buffer(kName, "rstd_out", rstd_out, C);
  const int64_t count = N * inner;
  if (count < 2) {
    throw std::invalid_argument(std::string(kName) + ": " + std::to_string(count) +
                                " value per channel; training needs at least 2");
  }
  const KernelTable& kernels = active_kernels();
  const auto elem = static_cast<int64_t>(dtype_size(dtype));

  // Sums are taken about the channel's first value, which keeps the variance from cancelling
  // when the mean is large next to the spread.
  std::vector<float> pivot(static_cast<std::size_t>(C));
  for (int64_t c = 0; c < C; ++c) pivot[c] = element_as_float(dtype, x, c * inner);

  std::vector<float> center(static_cast<std::size_t>(C));
  std::vector<float> scale(center.size());
  std::vector<float> shift(center.size());
  // Turns channel c's sums about its pivot into its statistics, outputs and affine map.
  const auto finish_channel = [&](int64_t c, double sum, double sum_squares) {
    const double offset = sum / static_cast<double>(count);
    const double var = std::max(sum_squares / static_cast<double>(count) - offset * offset, 0.0);
    const double mean = pivot[c] + offset;
    const double rstd = 1.0 / std::sqrt(var + eps);
    mean_out[c] = static_cast<float>(mean);
    rstd_out[c] = static_cast<float>(rstd);
    if (running_mean != nullptr) {
      running_mean[c] = static_cast<float>((1.0 - momentum) * running_mean[c] + momentum * mean);
    }
    if (running_var != nullptr) {
      const double unbiased = var * static_cast<double>(count) / static_cast<double>(count - 1);
      running_var[c] = static_cast<float>((1.0 - momentum) * running_var[c] + momentum * unbiased);
    }
    // The mean rounded to float32 is off by up to half an ulp of its magnitude, which rstd
    // magnifies when the spread is small; shift takes the rounding back out.
    center[c] = static_cast<float>(mean);
    const double s = weight != nullptr ? weight[c] * rstd : rstd;
    scale[c] = static_cast<float>(s);
    shift[c] = static_cast<float>((bias != nullptr ? bias[c] : 0.0) + (center[c] - mean) * s);
  };

  const int64_t channel_bytes = N * inner * elem;
  if (inner > 1 && channel_bytes <= kFusedChannelBytes) {
    // A task sums its first channel, then normalises each channel while it is still in cache
    // and sums the next one in the same loops: x is read from memory once instead of twice.
    std::vector<double> s1(static_cast<std::size_t>(C));
    std::vector<double> s2(s1.size());
    parallel_for(C, 2 * channel_bytes, [&](int64_t c0, int64_t c1) {
      kernels.batch_norm_stats(dtype, x, C, inner, pivot.data(), 0, N, c0, c0 + 1, s1.data(),
                               s2.data());
      for (int64_t c = c0; c < c1; ++c) {
        finish_channel(c, s1[c], s2[c]);
        kernels.batch_norm_channel(dtype, x, y, N, C, inner, c, center.data(), scale.data(),
                                   shift.data(), c + 1 < c1 ? c + 1 : -1, pivot.data(), s1.data(),
                                   s2.data());
      }
    });
    return;
  }

  // Tasks sum (batch chunk, channel block) tiles into their own slots of s1 and s2:
  // [chunks, C] each, added up below; a second pass normalises.
  const int64_t threads = thread_count();
  const int64_t chunks =
      inner == 1 ? ceil_div(N, kStatRowChunk) : std::clamp(ceil_div(4 * threads, C), int64_t{1}, N);
  const int64_t channel_block = inner == 1 ? kStatChannelBlock : 1;
  const int64_t channel_blocks = ceil_div(C, channel_block);
  std::vector<double> s1(static_cast<std::size_t>(chunks * C));
  std::vector<double> s2(s1.size());
  const int64_t tile_bytes = ceil_div(N, chunks) * channel_block * inner * elem;
  parallel_for(chunks * channel_blocks, tile_bytes, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t chunk = t / channel_blocks;
      const int64_t c0 = (t % channel_blocks) * channel_block;
      kernels.batch_norm_stats(dtype, x, C, inner, pivot.data(), N * chunk / chunks,
                               N * (chunk + 1) / chunks, c0, std::min(C, c0 + channel_block),
                               s1.data() + chunk * C, s2.data() + chunk * C);
    }
  });
  for (int64_t c = 0; c < C; ++c) {
    double sum = 0.0;
    double sum_squares = 0.0;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      sum += s1[chunk * C + c];
      sum_squares += s2[chunk * C + c];
    }
    finish_channel(c, sum, sum_squares);
  }
  apply(kernels, dtype, N, C, inner, x, y, center, scale, shift);
}

}  // namespace tileops::cpu
