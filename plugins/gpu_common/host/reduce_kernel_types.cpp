// Sum, Prod and Mean on the GPU.
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

template <Reduction kKind, class Interface>
std::optional<std::string> ReduceKernel<kKind, Interface>::refusal(const typename Interface::Call& call) {
  for (DType d : {call.in_dtype, call.out_dtype}) {
    if (!reducible(d)) {
      return "serves float16, bfloat16, float32, float64, int32 and int64, not " + std::string(dtype_name(d));
    }
  }
  return std::nullopt;
}

template <Reduction kKind, class Interface>
ReduceKernel<kKind, Interface>::ReduceKernel(const typename Interface::Call& call)
    : Interface::template Impl<GpuKernel>(call), sm_count_(sm_count_of(call)) {}

template <Reduction kKind, class Interface>
void ReduceKernel<kKind, Interface>::forward(const Tensor& x, const Tensor& y, std::int64_t outer,
                                             std::int64_t reduce, std::int64_t inner) {
  DeviceGuard on(x.device().index());
  const double divisor = kKind == Reduction::mean ? static_cast<double>(reduce) : 1.0;
  const ReduceArgs args{x.data_ptr(), y.data_ptr(), outer,     reduce,    inner,
                        x.dtype(),    y.dtype(),    kKind == Reduction::prod, sm_count_, divisor};
  const std::size_t bytes = reduce_workspace_bytes(args);
  const Tensor partial =
      bytes == 0 ? Tensor() : Tensor::empty({static_cast<std::int64_t>(bytes)}, DType::uint8, x.device());
  launch_reduce(args, partial.defined() ? partial.data_ptr() : nullptr, stream_of(x));
}

template class ReduceKernel<Reduction::sum, ops::SumFwdOp::Sum>;
template class ReduceKernel<Reduction::prod, ops::ProdFwdOp::Prod>;
template class ReduceKernel<Reduction::mean, ops::MeanFwdOp::Mean>;

}  // namespace tileops::gpu
