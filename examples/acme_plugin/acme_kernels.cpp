#include "acme_kernels.hpp"

#include <cmath>
#include <vector>

#include "tileops/ops/rms_norm.hpp"

namespace acme {
namespace {

using tileops::CallArgs;
using tileops::DType;
using tileops::OpOutputs;
using tileops::Tensor;

// Acme computes in float32 and converts at the edges (its memory is host memory).
std::vector<float> as_floats(const Tensor& t) {
  const Tensor f = t.to(DType::float32).contiguous();
  return std::vector<float>(f.data<float>(), f.data<float>() + f.numel());
}

Tensor from_floats(const std::vector<float>& values, const tileops::Shape& shape, DType dtype,
                   const tileops::Device& device) {
  Tensor f = Tensor::empty(shape, DType::float32, device);
  std::copy(values.begin(), values.end(), f.data<float>());
  return f.to(dtype);
}

}  // namespace

tileops::TargetKernel build_rms_norm(std::span<const std::optional<tileops::TensorSpec>> inputs,
                                     const tileops::ParamMap& params) {
  // The typed parameters the core's RMSNormFwdOp holds: an unset eps means the dtype's epsilon.
  const auto p = tileops::RMSNormFwdParams::from(params);
  std::int64_t n = 1;
  for (std::int64_t d : p.normalized_shape) n *= d;
  const double eps = p.eps ? *p.eps : tileops::dtype_epsilon(inputs[0]->dtype);
  const bool has_weight = inputs.size() > 1 && inputs[1].has_value();
  return [n, eps, has_weight](const CallArgs& args) -> OpOutputs {
    const Tensor& x = args.inputs[0];
    const std::vector<float> in = as_floats(x);
    const std::vector<float> w = has_weight ? as_floats(args.inputs[1]) : std::vector<float>(n, 1.0f);
    std::vector<float> out(in.size());
    for (std::size_t r = 0; r * n < in.size(); ++r) {
      double sum_sq = 0;
      for (std::int64_t j = 0; j < n; ++j) sum_sq += double(in[r * n + j]) * in[r * n + j];
      const float rstd = static_cast<float>(1.0 / std::sqrt(sum_sq / n + eps));
      for (std::int64_t j = 0; j < n; ++j) out[r * n + j] = in[r * n + j] * rstd * w[j];
    }
    return {from_floats(out, x.shape(), x.dtype(), x.device())};
  };
}

tileops::TargetKernel build_gemm(std::span<const std::optional<tileops::TensorSpec>>, const tileops::ParamMap& params) {
  const bool ta = std::get<bool>(params.at("trans_a"));
  const bool tb = std::get<bool>(params.at("trans_b"));
  return [ta, tb](const CallArgs& args) -> OpOutputs {
    const Tensor& a = args.inputs[0];
    const Tensor& b = args.inputs[1];
    const std::int64_t m = ta ? a.shape()[1] : a.shape()[0];
    const std::int64_t k = ta ? a.shape()[0] : a.shape()[1];
    const std::int64_t n = tb ? b.shape()[0] : b.shape()[1];
    const std::vector<float> pa = as_floats(a), pb = as_floats(b);
    std::vector<float> d(static_cast<std::size_t>(m * n), 0.0f);
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t p = 0; p < k; ++p) {
        const float av = ta ? pa[p * m + i] : pa[i * k + p];
        for (std::int64_t j = 0; j < n; ++j) d[i * n + j] += av * (tb ? pb[j * k + p] : pb[p * n + j]);
      }
    }
    return {from_floats(d, tileops::Shape{m, n}, a.dtype(), a.device())};
  };
}

}  // namespace acme
