#include "norm_kernels.hpp"

#include "cpu_kernels.hpp"

namespace tileops::cpu {
namespace {

const void* data_or_null(const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

// The [C] statistics vectors of batch norm as contiguous float32 (the kernels' layout).
Tensor as_float32(const Tensor& t) { return t.defined() ? t.to(DType::float32).contiguous() : t; }
const float* floats_or_null(const Tensor& t) { return t.defined() ? t.data<float>() : nullptr; }

struct BatchLayout {
  std::int64_t n, c, inner;
};

BatchLayout batch_layout(const Tensor& x) {
  const std::int64_t n = x.shape()[0], c = x.shape()[1];
  return {n, c, n * c == 0 ? 0 : x.numel() / (n * c)};
}

}  // namespace

Tensor RMSNormKernel::forward(const Tensor& x, const Tensor& weight) {
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  const std::int64_t rows = call_.n == 0 ? 0 : x.numel() / call_.n;
  rms_norm(call_.dtype, rows, call_.n, x.data_ptr(), data_or_null(weight), y.data_ptr(), call_.eps);
  return y;
}

Tensor FusedAddRMSNormKernel::forward(const Tensor& x, const Tensor& residual, const Tensor& weight) {
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  const std::int64_t rows = call_.n == 0 ? 0 : x.numel() / call_.n;
  fused_add_rms_norm(call_.dtype, rows, call_.n, x.data_ptr(), residual.data_ptr(), weight.data_ptr(), y.data_ptr(),
                     call_.eps);
  return y;
}

Tensor LayerNormKernel::forward(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  const std::int64_t rows = call_.n == 0 ? 0 : x.numel() / call_.n;
  layer_norm(call_.dtype, rows, call_.n, x.data_ptr(), data_or_null(weight), data_or_null(bias), y.data_ptr(),
             call_.eps);
  return y;
}

std::optional<std::string> SoftmaxKernel::refusal(const Call& call) {
  if (call.inner != 1) return "serves softmax over the last axis only";
  return refuse_unless_float(call.dtype);
}

Tensor SoftmaxKernel::forward(const Tensor& x) {
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  const std::int64_t rows = call_.n == 0 ? 0 : x.numel() / call_.n;
  softmax(call_.dtype, rows, call_.n, x.data_ptr(), y.data_ptr());
  return y;
}

BatchNormTrainKernel::Result BatchNormTrainKernel::forward(const Tensor& x, const Tensor& running_mean,
                                                          const Tensor& running_var, const Tensor& weight,
                                                          const Tensor& bias) {
  const BatchLayout l = batch_layout(x);  // the manifest guarantees N * inner >= 2 when training
  Result r{Tensor::empty(x.shape(), x.dtype(), x.device()), Tensor::empty({l.c}, DType::float32),
           Tensor::empty({l.c}, DType::float32)};
  const Tensor w = as_float32(weight), b = as_float32(bias);
  batch_norm_train(call_.dtype, l.n, l.c, l.inner, x.data_ptr(), floats_or_null(w), floats_or_null(b),
                   r.y.data_ptr(), r.mean.data<float>(), r.rstd.data<float>(), running_mean.data<float>(),
                   running_var.data<float>(), call_.momentum, call_.eps);
  return r;
}

Tensor BatchNormInferKernel::forward(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                                     const Tensor& weight, const Tensor& bias) {
  const BatchLayout l = batch_layout(x);
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  const Tensor w = as_float32(weight), b = as_float32(bias);
  batch_norm_infer(call_.dtype, l.n, l.c, l.inner, x.data_ptr(), running_mean.data<float>(),
                   running_var.data<float>(), floats_or_null(w), floats_or_null(b), y.data_ptr(), call_.eps);
  return y;
}

}  // namespace tileops::cpu
