// RMSNorm, FusedAddRMSNorm, LayerNorm, Softmax and BatchNorm on the GPU.
#include "call_support.hpp"
#include "kernel_types.hpp"
#include "launchers.hpp"

namespace tileops::gpu {

namespace {

// The row kernels' resident blocks on the call's device, counted once per kernel type.
template <class RowCall, class Count>
std::int64_t resident_blocks_of(const RowCall& call, Count count) {
  DeviceGuard on(device_index_of(call));
  return count(call.n, call.dtype, sm_count_of(call));
}

}  // namespace

RMSNormKernel::RMSNormKernel(const Call& call)
    : Impl(call), resident_blocks_(resident_blocks_of(call, rms_norm_resident_blocks)) {}

Tensor RMSNormKernel::forward(const Tensor& x, const Tensor& weight) {
  DeviceGuard on(x.device().index());
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  launch_rms_norm({x.data_ptr(), data_or_null(weight), nullptr, y.data_ptr(), rows_of(x, call_.n), call_.n,
                   static_cast<float>(call_.eps), call_.dtype, resident_blocks_},
                  stream_of(x));
  return y;
}

Tensor FusedAddRMSNormKernel::forward(const Tensor& x, const Tensor& residual, const Tensor& weight) {
  DeviceGuard on(x.device().index());
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  launch_fused_add_rms_norm({x.data_ptr(), residual.data_ptr(), weight.data_ptr(), y.data_ptr(), rows_of(x, call_.n),
                             call_.n, static_cast<float>(call_.eps), call_.dtype},
                            stream_of(x));
  return y;
}

LayerNormKernel::LayerNormKernel(const Call& call)
    : Impl(call), resident_blocks_(resident_blocks_of(call, layer_norm_resident_blocks)) {}

Tensor LayerNormKernel::forward(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  DeviceGuard on(x.device().index());
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  launch_layer_norm({x.data_ptr(), data_or_null(weight), data_or_null(bias), y.data_ptr(), rows_of(x, call_.n), call_.n,
                     static_cast<float>(call_.eps), call_.dtype, resident_blocks_},
                    stream_of(x));
  return y;
}

SoftmaxKernel::SoftmaxKernel(const Call& call)
    : Impl(call), resident_blocks_(call.inner == 1 ? resident_blocks_of(call, softmax_resident_blocks) : 0) {}

Tensor SoftmaxKernel::forward(const Tensor& x) {
  DeviceGuard on(x.device().index());
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  const std::int64_t run = call_.n * call_.inner;
  launch_softmax({x.data_ptr(), y.data_ptr(), run == 0 ? 0 : x.numel() / run, call_.n, call_.inner, call_.dtype,
                  resident_blocks_},
                 stream_of(x));
  return y;
}

namespace {

struct BatchLayout {
  std::int64_t n, channels, inner;
};

BatchLayout batch_layout(const Tensor& x) {
  const std::int64_t n = x.shape()[0], c = x.shape()[1];
  return {n, c, n * c == 0 ? 0 : x.numel() / (n * c)};
}

// The [C] float32 parameters as the kernels read them (the manifest declares them float32).
Tensor as_float32(const Tensor& t) { return t.defined() ? t.to(DType::float32).contiguous() : t; }
const float* floats_or_null(const Tensor& t) { return t.defined() ? t.data<float>() : nullptr; }

Tensor workspace(std::size_t bytes, const Device& device) {
  return Tensor::empty({static_cast<std::int64_t>(bytes)}, DType::uint8, device);
}

}  // namespace

namespace {

BatchNormSingleLaunch single_launch_of(const CallSpec& call, DType dtype) {
  DeviceGuard on(device_index_of(call));
  return batch_norm_single_launch(dtype);
}

}  // namespace

BatchNormTrainKernel::BatchNormTrainKernel(const Call& call)
    : Impl(call), sm_count_(sm_count_of(call)), single_launch_(single_launch_of(call, call.dtype)) {}

BatchNormTrainKernel::Result BatchNormTrainKernel::forward(const Tensor& x, const Tensor& running_mean,
                                                          const Tensor& running_var, const Tensor& weight,
                                                          const Tensor& bias) {
  DeviceGuard on(x.device().index());
  const BatchLayout l = batch_layout(x);
  Result r{Tensor::empty(x.shape(), x.dtype(), x.device()), Tensor::empty({l.channels}, DType::float32, x.device()),
           Tensor::empty({l.channels}, DType::float32, x.device())};
  const Tensor w = as_float32(weight), b = as_float32(bias);
  BatchNormArgs args{x.data_ptr(),
                     r.y.data_ptr(),
                     l.n,
                     l.channels,
                     l.inner,
                     floats_or_null(w),
                     floats_or_null(b),
                     running_mean.data<float>(),
                     running_var.data<float>(),
                     r.mean.data<float>(),
                     r.rstd.data<float>(),
                     call_.eps,
                     call_.momentum,
                     call_.dtype,
                     sm_count_,
                     single_launch_};
  const Tensor scratch = workspace(batch_norm_training_workspace_bytes(args), x.device());
  launch_batch_norm(args, true, scratch.data_ptr(), stream_of(x));
  return r;
}

Tensor BatchNormInferKernel::forward(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                                     const Tensor& weight, const Tensor& bias) {
  DeviceGuard on(x.device().index());
  const BatchLayout l = batch_layout(x);
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  const Tensor w = as_float32(weight), b = as_float32(bias);
  BatchNormArgs args{x.data_ptr(),
                     y.data_ptr(),
                     l.n,
                     l.channels,
                     l.inner,
                     floats_or_null(w),
                     floats_or_null(b),
                     running_mean.data<float>(),
                     running_var.data<float>(),
                     nullptr,
                     nullptr,
                     call_.eps,
                     call_.momentum,
                     call_.dtype,
                     0,
                     {}};
  launch_batch_norm(args, false, nullptr, stream_of(x));
  return y;
}

}  // namespace tileops::gpu
