// SiluAndMul, GeluAndMul, Add, Relu and ALiBi on the GPU.
#include <vector>

#include "call_support.hpp"
#include "kernel_types.hpp"
#include "launchers.hpp"
#include "strided_layout.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/alibi_slope.hpp"

namespace tileops::gpu {

Tensor SiluAndMulKernel::forward(const Tensor& x) {
  DeviceGuard on(x.device().index());
  Shape shape = x.shape();
  const std::int64_t n = shape.back() / 2;
  shape.back() = n;
  Tensor y = Tensor::empty(shape, x.dtype(), x.device());
  launch_silu_and_mul({x.data_ptr(), y.data_ptr(), rows_of(y, n), n, x.dtype()}, stream_of(x));
  return y;
}

Tensor GeluAndMulKernel::forward(const Tensor& x) {
  DeviceGuard on(x.device().index());
  Shape shape = x.shape();
  const std::int64_t n = shape.back() / 2;
  shape.back() = n;
  Tensor y = Tensor::empty(shape, x.dtype(), x.device());
  launch_gelu_and_mul({x.data_ptr(), y.data_ptr(), rows_of(y, n), n, x.dtype(), call_.approximate == Approximation::tanh},
                      stream_of(x));
  return y;
}

std::optional<std::string> AddKernel::refusal(const Call& call) {
  if (call.dtype == DType::int32 || call.dtype == DType::int64) return std::nullopt;
  if (!refuse_unless_float(call.dtype)) return std::nullopt;
  return "serves float32, float16, bfloat16, int32 and int64, not " + std::string(dtype_name(call.dtype));
}

namespace {

// The strides of `t` read as a view of `shape` (the broadcast result): 0 on axes it broadcasts.
Shape broadcast_strides(const Tensor& t, const Shape& shape) {
  Shape strides(shape.size(), 0);
  const std::size_t offset = shape.size() - t.shape().size();
  for (std::size_t d = 0; d < t.shape().size(); ++d) {
    if (t.shape()[d] != 1) strides[offset + d] = t.strides()[d];
  }
  return strides;
}

}  // namespace

void AddKernel::forward(const Tensor& a, const Tensor& b, double alpha, const Tensor& out) {
  DeviceGuard on(out.device().index());
  AddArgs args{a.data_ptr(), b.data_ptr(), out.data_ptr(), out.numel(), out.numel(), alpha, call_.dtype};
  if (call_.kind == BroadcastKind::row) {
    args.b_period = b.numel();
  } else if (call_.kind == BroadcastKind::general) {
    PairLayout l;
    const Shape a_strides = broadcast_strides(a, out.shape()), b_strides = broadcast_strides(b, out.shape());
    if (!coalesce(ShapeView(out.shape()), ShapeView(a_strides), ShapeView(b_strides), l)) {
      throw ValueError("AddFwdOp on " + out.device().str() + ": the broadcast of " + a.str() + " and " + b.str() +
                       " keeps more than " + std::to_string(kMaxStridedRank) +
                       " axes that no operand steps over as one run; the GPU kernel serves at most that many");
    }
    args.strided = true;
    args.rank = l.rank;
    for (int d = 0; d < l.rank; ++d) {
      args.shape[d] = l.shape[d];
      args.a_strides[d] = l.first[d];
      args.b_strides[d] = l.second[d];
    }
  }
  launch_add(args, stream_of(out));
}

void ReluKernel::forward(const Tensor& x, const Tensor& out) {
  DeviceGuard on(x.device().index());
  launch_relu({x.data_ptr(), out.data_ptr(), x.numel(), x.dtype()}, stream_of(x));
}

void GeluKernel::forward(const Tensor& x, const Tensor& out) {
  DeviceGuard on(x.device().index());
  launch_gelu({x.data_ptr(), out.data_ptr(), x.numel(), x.dtype(), call_.approximate == Approximation::tanh},
              stream_of(x));
}

AlibiKernel::AlibiKernel(const Call& call) : Impl(call) {
  std::vector<double> slopes(static_cast<std::size_t>(call.num_heads));
  for (std::int64_t h = 0; h < call.num_heads; ++h)
    slopes[static_cast<std::size_t>(h)] = alibi_slope(h, call.num_heads);
  slopes_ = Tensor::from_doubles(slopes, {call.num_heads}, DType::float64).to(*call.device);
}

Tensor AlibiKernel::forward() {
  DeviceGuard on(call_.device->index());
  Tensor y = Tensor::empty({call_.num_heads, call_.seq_len, call_.seq_len}, call_.dtype, *call_.device);
  launch_alibi({slopes_.data<double>(), y.data_ptr(), call_.num_heads, call_.seq_len, call_.dtype}, stream_of(y));
  return y;
}

}  // namespace tileops::gpu
