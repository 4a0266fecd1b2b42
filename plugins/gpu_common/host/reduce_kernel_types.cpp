// Sum and Prod on the GPU.
#include "call_support.hpp"
#include "kernel_types.hpp"
#include "launchers.hpp"

namespace tileops::gpu {
namespace {

bool reducible(DType d) {
  return d == DType::float16 || d == DType::bfloat16 || d == DType::float32 || d == DType::float64 ||
         d == DType::int32 || d == DType::int64;
}

}  // namespace

template <bool kProduct, class Interface>
std::optional<std::string> ReduceKernel<kProduct, Interface>::refusal(const typename Interface::Call& call) {
  for (DType d : {call.in_dtype, call.out_dtype}) {
    if (!reducible(d)) {
      return "serves float16, bfloat16, float32, float64, int32 and int64, not " + std::string(dtype_name(d));
    }
  }
  return std::nullopt;
}

template <bool kProduct, class Interface>
ReduceKernel<kProduct, Interface>::ReduceKernel(const typename Interface::Call& call)
    : Interface::template Impl<GpuKernel>(call), sm_count_(sm_count_of(call)) {}

template <bool kProduct, class Interface>
void ReduceKernel<kProduct, Interface>::forward(const Tensor& x, const Tensor& y, std::int64_t outer,
                                                std::int64_t reduce, std::int64_t inner) {
  DeviceGuard on(x.device().index());
  const ReduceArgs args{x.data_ptr(), y.data_ptr(), outer, reduce, inner, x.dtype(), y.dtype(), kProduct, sm_count_};
  const std::size_t bytes = reduce_workspace_bytes(args);
  const Tensor partial =
      bytes == 0 ? Tensor() : Tensor::empty({static_cast<std::int64_t>(bytes)}, DType::uint8, x.device());
  launch_reduce(args, partial.defined() ? partial.data_ptr() : nullptr, stream_of(x));
}

template class ReduceKernel<false, ops::SumFwdOp::Sum>;
template class ReduceKernel<true, ops::ProdFwdOp::Prod>;

}  // namespace tileops::gpu
