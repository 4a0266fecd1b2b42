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
    if (tb) {
      // a in double once; then each row of b, in double, serves every row of a while it is in
      // cache (a decode-sized a streams a weight matrix once, not once per row). Four partial
      // sums hide the additions' latency.
      std::vector<double> ad(static_cast<std::size_t>(m * k)), bj(static_cast<std::size_t>(k));
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t p = 0; p < k; ++p) ad[static_cast<std::size_t>(i * k + p)] = a_at(i, p);
      }
      for (std::int64_t j = 0; j < n; ++j) {
        for (std::int64_t p = 0; p < k; ++p) bj[static_cast<std::size_t>(p)] = load(pb[j * k + p]);
        for (std::int64_t i = 0; i < m; ++i) {
          const double* ai = ad.data() + i * k;
          double acc[4] = {0, 0, 0, 0};
          std::int64_t p = 0;
          for (; p + 4 <= k; p += 4) {
            for (int u = 0; u < 4; ++u) acc[u] += ai[p + u] * bj[static_cast<std::size_t>(p + u)];
          }
          for (; p < k; ++p) acc[0] += ai[p] * bj[static_cast<std::size_t>(p)];
          pd[i * n + j] = store<T>((acc[0] + acc[1]) + (acc[2] + acc[3]));
        }
      }
      return;
    }
    std::vector<double> row(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < m; ++i) {
      std::fill(row.begin(), row.end(), 0.0);
      for (std::int64_t p = 0; p < k; ++p) {
        const double av = a_at(i, p);
        for (std::int64_t j = 0; j < n; ++j) row[j] += av * load(pb[p * n + j]);
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
