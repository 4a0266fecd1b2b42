#include "norm_reference.hpp"

#include <cmath>
#include <vector>

#include "common/dtype_dispatch.hpp"

namespace tileops::ref {
namespace {

// The scale/shift vector as doubles; `fill` when the tensor is undefined.
std::vector<double> per_element(const Tensor& t, std::int64_t n, double fill) {
  return t.defined() ? t.to_doubles() : std::vector<double>(static_cast<std::size_t>(n), fill);
}

}  // namespace

Tensor RMSNormFwdOp::RmsNorm::forward(const Tensor& x, const Tensor& weight) {
  const std::int64_t n = call_.n;
  const std::int64_t rows = n == 0 ? 0 : x.numel() / n;
  const std::vector<double> w = per_element(weight, n, 1.0);
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  visit_dtype(x.dtype(), [&]<class T>(TypeTag<T>) {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (std::int64_t r = 0; r < rows; ++r) {
      double sum_sq = 0;
      for (std::int64_t j = 0; j < n; ++j) sum_sq += load(in[r * n + j]) * load(in[r * n + j]);
      const double rstd = 1.0 / std::sqrt(sum_sq / static_cast<double>(n) + call_.eps);
      for (std::int64_t j = 0; j < n; ++j) out[r * n + j] = store<T>(load(in[r * n + j]) * rstd * w[j]);
    }
  });
  return y;
}

Tensor FusedAddRMSNormFwdOp::FusedAddRmsNorm::forward(const Tensor& x, const Tensor& residual, const Tensor& weight) {
  const std::int64_t n = call_.n;
  const std::int64_t rows = n == 0 ? 0 : x.numel() / n;
  const std::vector<double> w = weight.to_doubles();
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  visit_dtype(x.dtype(), [&]<class T>(TypeTag<T>) {
    const T* in = x.data<T>();
    T* res = residual.data<T>();
    T* out = y.data<T>();
    for (std::int64_t r = 0; r < rows; ++r) {
      double sum_sq = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        T& stored = res[r * n + j];
        stored = store<T>(load(in[r * n + j]) + load(stored));
        sum_sq += load(stored) * load(stored);  // the rounded value the caller will see
      }
      const double rstd = 1.0 / std::sqrt(sum_sq / static_cast<double>(n) + call_.eps);
      for (std::int64_t j = 0; j < n; ++j) out[r * n + j] = store<T>(load(res[r * n + j]) * rstd * w[j]);
    }
  });
  return y;
}

Tensor LayerNormFwdOp::LayerNorm::forward(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const std::int64_t n = call_.n;
  const std::int64_t rows = n == 0 ? 0 : x.numel() / n;
  const std::vector<double> w = per_element(weight, n, 1.0);
  const std::vector<double> b = per_element(bias, n, 0.0);
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  visit_dtype(x.dtype(), [&]<class T>(TypeTag<T>) {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (std::int64_t r = 0; r < rows; ++r) {
      double mean = 0;
      for (std::int64_t j = 0; j < n; ++j) mean += load(in[r * n + j]);
      mean /= static_cast<double>(n);
      double var = 0;
      for (std::int64_t j = 0; j < n; ++j) var += (load(in[r * n + j]) - mean) * (load(in[r * n + j]) - mean);
      const double rstd = 1.0 / std::sqrt(var / static_cast<double>(n) + call_.eps);
      for (std::int64_t j = 0; j < n; ++j) out[r * n + j] = store<T>((load(in[r * n + j]) - mean) * rstd * w[j] + b[j]);
    }
  });
  return y;
}

namespace {

struct ChannelLayout {
  std::int64_t batch, channels, inner;
};

ChannelLayout layout_of(const Tensor& x, std::int64_t channels) {
  const std::int64_t batch = x.shape()[0];
  const std::int64_t inner = batch * channels == 0 ? 0 : x.numel() / (batch * channels);
  return {batch, channels, inner};
}

// Normalizes x with per-channel mean and rstd into y (all as the caller's element type).
template <class T>
void normalize(const T* in, T* out, const ChannelLayout& l, const std::vector<double>& mean,
               const std::vector<double>& rstd, const std::vector<double>& w, const std::vector<double>& b) {
  for (std::int64_t i = 0; i < l.batch; ++i) {
    for (std::int64_t c = 0; c < l.channels; ++c) {
      const std::int64_t base = (i * l.channels + c) * l.inner;
      for (std::int64_t k = 0; k < l.inner; ++k) {
        out[base + k] = store<T>((load(in[base + k]) - mean[c]) * rstd[c] * w[c] + b[c]);
      }
    }
  }
}

}  // namespace

BatchNormFwdOp::BatchNormFwdTrain::Result BatchNormFwdOp::BatchNormFwdTrain::forward(
    const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight, const Tensor& bias) {
  const ChannelLayout l = layout_of(x, call_.channels);
  const std::int64_t count = l.batch * l.inner;
  const std::vector<double> w = per_element(weight, l.channels, 1.0);
  const std::vector<double> b = per_element(bias, l.channels, 0.0);
  std::vector<double> mean(static_cast<std::size_t>(l.channels), 0.0);
  std::vector<double> var(static_cast<std::size_t>(l.channels), 0.0);
  Result result{Tensor::empty(x.shape(), x.dtype(), x.device()), Tensor::empty({l.channels}, DType::float32, x.device()),
                Tensor::empty({l.channels}, DType::float32, x.device())};
  visit_dtype(x.dtype(), [&]<class T>(TypeTag<T>) {
    const T* in = x.data<T>();
    for (std::int64_t c = 0; c < l.channels; ++c) {
      for (std::int64_t i = 0; i < l.batch; ++i) {
        for (std::int64_t k = 0; k < l.inner; ++k) mean[c] += load(in[(i * l.channels + c) * l.inner + k]);
      }
      mean[c] /= static_cast<double>(count);
      for (std::int64_t i = 0; i < l.batch; ++i) {
        for (std::int64_t k = 0; k < l.inner; ++k) {
          const double d = load(in[(i * l.channels + c) * l.inner + k]) - mean[c];
          var[c] += d * d;
        }
      }
    }
    std::vector<double> rstd(static_cast<std::size_t>(l.channels));
    for (std::int64_t c = 0; c < l.channels; ++c) rstd[c] = 1.0 / std::sqrt(var[c] / static_cast<double>(count) + call_.eps);
    normalize(in, result.y.data<T>(), l, mean, rstd, w, b);
    for (std::int64_t c = 0; c < l.channels; ++c) {
      result.mean.set(c, mean[c]);
      result.rstd.set(c, rstd[c]);
      const double unbiased = count > 1 ? var[c] / static_cast<double>(count - 1) : var[c];
      running_mean.set(c, (1 - call_.momentum) * running_mean.get(c) + call_.momentum * mean[c]);
      running_var.set(c, (1 - call_.momentum) * running_var.get(c) + call_.momentum * unbiased);
    }
  });
  return result;
}

Tensor BatchNormFwdOp::BatchNormFwdInfer::forward(const Tensor& x, const Tensor& running_mean,
                                                     const Tensor& running_var, const Tensor& weight, const Tensor& bias) {
  const ChannelLayout l = layout_of(x, call_.channels);
  const std::vector<double> w = per_element(weight, l.channels, 1.0);
  const std::vector<double> b = per_element(bias, l.channels, 0.0);
  const std::vector<double> mean = running_mean.to_doubles();
  std::vector<double> rstd = running_var.to_doubles();
  for (double& v : rstd) v = 1.0 / std::sqrt(v + call_.eps);
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  visit_dtype(x.dtype(), [&]<class T>(TypeTag<T>) { normalize(x.data<T>(), y.data<T>(), l, mean, rstd, w, b); });
  return y;
}

}  // namespace tileops::ref
