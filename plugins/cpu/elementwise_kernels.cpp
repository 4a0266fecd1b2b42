#include "elementwise_kernels.hpp"

#include <algorithm>

#include "cpu_kernels.hpp"
#include "norm_kernels.hpp"

namespace tileops::cpu {
namespace {

bool reducible(DType in, DType out) {
  switch (in) {
    case DType::float32:
    case DType::float16:
    case DType::bfloat16:
    case DType::float64:
      return out == in || out == DType::float32 || out == DType::float64;
    case DType::int32:
    case DType::int64:
      return out == DType::int64;
    default:
      return false;
  }
}

template <class Call>
std::optional<std::string> refuse_reduction(const Call& call) {
  if (reducible(call.in_dtype, call.out_dtype)) return std::nullopt;
  return "serves float inputs to the same dtype, float32 or float64 and integer inputs to int64, not " +
         std::string(dtype_name(call.in_dtype)) + " to " + std::string(dtype_name(call.out_dtype));
}

}  // namespace

Tensor SiluAndMulKernel::forward(const Tensor& x) {
  const std::int64_t rows = x.shape()[0], n = x.shape()[1] / 2;
  Tensor y = Tensor::empty({rows, n}, x.dtype(), x.device());
  silu_and_mul(call_.dtype, rows, n, x.data_ptr(), y.data_ptr());
  return y;
}

Tensor GeluAndMulKernel::forward(const Tensor& x) {
  const std::int64_t rows = x.shape()[0], n = x.shape()[1] / 2;
  Tensor y = Tensor::empty({rows, n}, x.dtype(), x.device());
  gelu_and_mul(call_.dtype, rows, n, x.data_ptr(), y.data_ptr(), call_.approximate == Approximation::tanh);
  return y;
}

std::optional<std::string> AddKernel::refusal(const Call& call) {
  if (call.kind == BroadcastKind::general) return "serves same-shape and row-broadcast additions only";
  if (call.dtype == DType::int32 || call.dtype == DType::int64) return std::nullopt;
  return refuse_unless_float(call.dtype);
}

void AddKernel::forward(const Tensor& a, const Tensor& b, double alpha, const Tensor& out) {
  if (call_.kind == BroadcastKind::same_shape) {
    add(call_.dtype, out.numel(), a.data_ptr(), b.data_ptr(), out.data_ptr(), alpha);
    return;
  }
  const std::int64_t n = out.shape().back();
  add_row_broadcast(call_.dtype, n == 0 ? 0 : out.numel() / n, n, a.data_ptr(), b.data_ptr(), out.data_ptr(), alpha);
}

void ReluKernel::forward(const Tensor& x, const Tensor& out) { relu(call_.dtype, x.numel(), x.data_ptr(), out.data_ptr()); }

void GeluKernel::forward(const Tensor& x, const Tensor& out) {
  gelu(call_.dtype, x.numel(), x.data_ptr(), out.data_ptr(), call_.approximate == Approximation::tanh);
}

Tensor AlibiKernel::forward() {
  Tensor y = Tensor::empty({call_.num_heads, call_.seq_len, call_.seq_len}, call_.dtype, Device::cpu());
  alibi(call_.dtype, call_.num_heads, call_.seq_len, y.data_ptr());
  return y;
}

std::optional<std::string> BlasGemmKernel::refusal(const Call& call) {
  return blas_refusal(call.dtype, call.m, call.n, call.k);
}

Entry BlasGemmKernel::entry_for(const Call& call) {
  return {Identity::of(std::make_tuple(call.dtype, call.trans_a, call.trans_b)),
          [call] { return std::make_shared<BlasGemmKernel>(call); }};
}

void BlasGemmKernel::forward(const Tensor& a, const Tensor& b, const Tensor& d) {
  const std::int64_t m = d.shape()[0], n = d.shape()[1];
  const std::int64_t k = call_.trans_a ? a.shape()[0] : a.shape()[1];
  // BLAS wants leading dimensions of at least 1, even for empty operands.
  auto ld = [](std::int64_t row) { return std::max<std::int64_t>(row, 1); };
  gemm(call_.dtype, m, n, k, a.data_ptr(), ld(a.shape()[1]), call_.trans_a, b.data_ptr(), ld(b.shape()[1]),
       call_.trans_b, d.data_ptr(), ld(n));
}

std::optional<std::string> DotRowsGemmKernel::refusal(const Call& call) {
  return dot_rows_refusal(call.dtype, call.m, call.trans_a, call.trans_b);
}

Entry DotRowsGemmKernel::entry_for(const Call& call) {
  return {Identity::of(call.dtype), [call] { return std::make_shared<DotRowsGemmKernel>(call); }};
}

void DotRowsGemmKernel::forward(const Tensor& a, const Tensor& b, const Tensor& d) {
  const std::int64_t m = d.shape()[0], n = d.shape()[1], k = a.shape()[1];
  auto ld = [](std::int64_t row) { return std::max<std::int64_t>(row, 1); };
  dot_rows_gemm(call_.dtype, m, n, k, a.data_ptr(), ld(k), b.data_ptr(), ld(k), d.data_ptr(), ld(n));
}

template <Reduction kKind, class Interface>
std::optional<std::string> ReduceKernel<kKind, Interface>::refusal(const typename Interface::Call& call) {
  return refuse_reduction(call);
}

template <Reduction kKind, class Interface>
void ReduceKernel<kKind, Interface>::forward(const Tensor& x, const Tensor& y, std::int64_t outer,
                                             std::int64_t reduce, std::int64_t inner) {
  const auto& call = this->call_;
  if constexpr (kKind == Reduction::prod) {
    reduce_prod(call.in_dtype, call.out_dtype, outer, reduce, inner, x.data_ptr(), y.data_ptr());
  } else if constexpr (kKind == Reduction::mean) {
    reduce_mean(call.in_dtype, call.out_dtype, outer, reduce, inner, x.data_ptr(), y.data_ptr());
  } else {
    reduce_sum(call.in_dtype, call.out_dtype, outer, reduce, inner, x.data_ptr(), y.data_ptr());
  }
}

template class ReduceKernel<Reduction::sum, ops::SumFwdOp::Sum>;
template class ReduceKernel<Reduction::prod, ops::ProdFwdOp::Prod>;
template class ReduceKernel<Reduction::mean, ops::MeanFwdOp::Mean>;

}  // namespace tileops::cpu
