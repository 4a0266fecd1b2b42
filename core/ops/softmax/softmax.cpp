#include "tileops/ops/softmax.hpp"

#include <cmath>
#include <limits>

#include "common/dtype_dispatch.hpp"
#include "softmax_reference.hpp"

namespace tileops {
namespace ref {

// The portable reference softmax.
Tensor SoftmaxFwdOp::Softmax::forward(const Tensor& x) {
  const std::int64_t n = call_.n, inner = call_.inner;
  const std::int64_t outer = n * inner == 0 ? 0 : x.numel() / (n * inner);
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  visit_dtype(x.dtype(), [&]<class T>(TypeTag<T>) {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (std::int64_t o = 0; o < outer; ++o) {
      for (std::int64_t i = 0; i < inner; ++i) {
        auto at = [&](std::int64_t j) { return (o * n + j) * inner + i; };
        double max = -std::numeric_limits<double>::infinity();
        for (std::int64_t j = 0; j < n; ++j) max = std::max(max, load(in[at(j)]));
        double sum = 0;
        for (std::int64_t j = 0; j < n; ++j) sum += std::exp(load(in[at(j)]) - max);
        for (std::int64_t j = 0; j < n; ++j) out[at(j)] = store<T>(std::exp(load(in[at(j)]) - max) / sum);
      }
    }
  });
  return y;
}

}  // namespace ref

OpOutputs SoftmaxFwdOp::forward(const CallArgs& args) {
  const Tensor x = args.inputs[0].contiguous();
  const std::int64_t axis = normalize_axis(dim(), x.dim());
  ops::SoftmaxFwdOp::Softmax::Call call;
  call.device = x.device();
  call.dtype = x.dtype();
  call.n = x.dim() == 0 ? 1 : x.shape()[axis];
  call.inner = 1;
  for (std::int64_t d = axis + 1; d < x.dim(); ++d) call.inner *= x.shape()[d];
  return outputs_of(kernel_for<ops::SoftmaxFwdOp::Softmax>(call).forward(x));
}

}  // namespace tileops
