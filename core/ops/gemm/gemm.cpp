#include "tileops/ops/gemm.hpp"

#include <vector>

#include "common/dtype_dispatch.hpp"
#include "gemm_reference.hpp"

namespace tileops {
namespace ref {

// The portable reference GEMM: a triple loop accumulating in double.
void GemmFwdOp::Gemm::forward(const Tensor& a, const Tensor& b, const Tensor& d) {
  const bool ta = call_.trans_a, tb = call_.trans_b;
  const std::int64_t m = d.shape()[0], n = d.shape()[1];
  const std::int64_t k = ta ? a.shape()[0] : a.shape()[1];
  visit_dtype(d.dtype(), [&]<class T>(TypeTag<T>) {
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* pd = d.data<T>();
    // Both loop orders walk memory contiguously in the innermost loop: rows of b when it is
    // stored transposed, else a row of d accumulated across b's rows.
    auto a_at = [&](std::int64_t i, std::int64_t p) { return load(ta ? pa[p * m + i] : pa[i * k + p]); };
    std::vector<double> row(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < m; ++i) {
      if (tb) {
        for (std::int64_t j = 0; j < n; ++j) {
          double acc = 0;
          for (std::int64_t p = 0; p < k; ++p) acc += a_at(i, p) * load(pb[j * k + p]);
          row[j] = acc;
        }
      } else {
        std::fill(row.begin(), row.end(), 0.0);
        for (std::int64_t p = 0; p < k; ++p) {
          const double av = a_at(i, p);
          for (std::int64_t j = 0; j < n; ++j) row[j] += av * load(pb[p * n + j]);
        }
      }
      for (std::int64_t j = 0; j < n; ++j) pd[i * n + j] = store<T>(row[j]);
    }
  });
}

}  // namespace ref

OpOutputs GemmFwdOp::forward(const CallArgs& args) {
  const Tensor a = args.inputs[0].contiguous();
  const Tensor b = args.inputs[1].contiguous();
  ops::GemmFwdOp::Gemm::Call call;
  call.device = a.device();
  call.dtype = a.dtype();
  call.trans_a = trans_a();
  call.trans_b = trans_b();
  call.m = call.trans_a ? a.shape()[1] : a.shape()[0];
  call.k = call.trans_a ? a.shape()[0] : a.shape()[1];
  call.n = call.trans_b ? b.shape()[0] : b.shape()[1];
  Tensor d = Tensor::empty({call.m, call.n}, call.dtype, a.device());
  kernel_for<ops::GemmFwdOp::Gemm>(call).forward(a, b, d);
  return outputs_of(d);
}

}  // namespace tileops
