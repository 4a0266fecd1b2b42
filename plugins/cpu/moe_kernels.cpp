#include "moe_kernels.hpp"

#include <algorithm>
#include <vector>

#include "cpu_kernels.hpp"
#include "tileops/errors.hpp"
#include "tileops/half.hpp"

namespace tileops::cpu {
namespace {

float element(DType dtype, const void* base, std::int64_t i) {
  switch (dtype) {
    case DType::float16: return static_cast<float>(static_cast<const Half*>(base)[i]);
    case DType::bfloat16: return static_cast<float>(static_cast<const BFloat16*>(base)[i]);
    default: return static_cast<const float*>(base)[i];
  }
}

void store(DType dtype, void* base, std::int64_t i, float v) {
  switch (dtype) {
    case DType::float16: static_cast<Half*>(base)[i] = Half(v); break;
    case DType::bfloat16: static_cast<BFloat16*>(base)[i] = BFloat16(v); break;
    default: static_cast<float*>(base)[i] = v;
  }
}

// Rows [first, first + count) of a [rows, k] matrix of dtype, as float32.
void rows_as_float(DType dtype, const void* m, std::int64_t k, std::int64_t first, std::int64_t count, float* out) {
  for (std::int64_t i = 0; i < count * k; ++i) out[i] = element(dtype, m, first * k + i);
}

// d [m, n] = a [m, k] times b^T with b stored [n, k] in dtype, all in float32: float32 weights
// go to sgemm as they are, others are converted a block of kBlockRows rows at a time.
void times_transposed(DType dtype, std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const void* b,
                      float* d, std::vector<float>& block) {
  if (const auto reason = blas_refusal(DType::float32, m, n, k)) throw ValueError("cpu_moe_experts: " + *reason);
  if (dtype == DType::float32) {
    gemm(DType::float32, m, n, k, a, k, false, b, k, true, d, n);
    return;
  }
  constexpr std::int64_t kBlockRows = 256;
  block.resize(static_cast<std::size_t>(std::min(n, kBlockRows) * k));
  std::vector<float> part(static_cast<std::size_t>(m * std::min(n, kBlockRows)));
  for (std::int64_t first = 0; first < n; first += kBlockRows) {
    const std::int64_t rows = std::min(kBlockRows, n - first);
    rows_as_float(dtype, b, k, first, rows, block.data());
    gemm(DType::float32, m, rows, k, a, k, false, block.data(), k, true, part.data(), rows);
    for (std::int64_t i = 0; i < m; ++i) {
      std::copy_n(part.data() + i * rows, rows, d + i * n + first);
    }
  }
}

}  // namespace

MoeRouteKernel::Result MoeRouteKernel::forward(const Tensor& router_logits, const Tensor& correction_bias) {
  const std::int64_t rows = router_logits.shape()[0];
  Result r{Tensor::empty({rows, call_.top_k}, DType::float32, router_logits.device()),
           Tensor::empty({rows, call_.top_k}, DType::int32, router_logits.device())};
  moe_route(router_logits.dtype(), rows, router_logits.shape()[1], call_.top_k, call_.sigmoid, call_.renormalize,
            static_cast<float>(call_.scale), router_logits.data_ptr(),
            correction_bias.defined() ? correction_bias.data<float>() : nullptr, r.topk_weights.data<float>(),
            r.topk_ids.data<std::int32_t>());
  return r;
}

Tensor MoeExpertsKernel::forward(const Tensor& hidden_states, const Tensor& topk_weights, const Tensor& topk_ids,
                                 const Tensor& w_gate_up, const Tensor& w_down) {
  const DType dtype = hidden_states.dtype();
  const std::int64_t rows = hidden_states.shape()[0], hidden = hidden_states.shape()[1];
  const std::int64_t k = topk_ids.shape()[1], experts = w_gate_up.shape()[0], inter = w_down.shape()[2];
  const std::int64_t routes = rows * k;
  const auto elem = static_cast<std::int64_t>(dtype_size(dtype));
  const std::int32_t* ids = topk_ids.data<std::int32_t>();
  const float* weights = topk_weights.data<float>();

  // Counting sort of the routes by expert (forward has checked every id).
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(experts + 1), 0);
  for (std::int64_t r = 0; r < routes; ++r) ++offsets[ids[r] + 1];
  std::int64_t largest = 0;
  for (std::int64_t e = 0; e < experts; ++e) {
    largest = std::max(largest, offsets[e + 1]);
    offsets[e + 1] += offsets[e];
  }
  std::vector<std::int64_t> order(static_cast<std::size_t>(routes));
  std::vector<std::int64_t> fill(offsets.begin(), offsets.end() - 1);
  for (std::int64_t r = 0; r < routes; ++r) order[fill[ids[r]]++] = r;

  std::vector<float> gathered(static_cast<std::size_t>(largest * hidden));
  std::vector<float> gate_up(static_cast<std::size_t>(largest * 2 * inter));
  std::vector<float> act(static_cast<std::size_t>(largest * inter));
  std::vector<float> out(static_cast<std::size_t>(largest * hidden));
  std::vector<float> block;
  std::vector<float> sum(static_cast<std::size_t>(rows * hidden), 0.0f);
  const auto* gu = static_cast<const std::byte*>(w_gate_up.data_ptr());
  const auto* dn = static_cast<const std::byte*>(w_down.data_ptr());
  for (std::int64_t e = 0; e < experts; ++e) {
    const std::int64_t first = offsets[e], n = offsets[e + 1] - first;
    if (n == 0) continue;
    for (std::int64_t j = 0; j < n; ++j) {
      rows_as_float(dtype, hidden_states.data_ptr(), hidden, order[first + j] / k, 1, gathered.data() + j * hidden);
    }
    times_transposed(dtype, n, 2 * inter, hidden, gathered.data(), gu + e * 2 * inter * hidden * elem, gate_up.data(),
                     block);
    if (call_.activation == ExpertActivation::gelu_and_mul) {
      gelu_and_mul(DType::float32, n, inter, gate_up.data(), act.data(), false);
    } else {
      silu_and_mul(DType::float32, n, inter, gate_up.data(), act.data());
    }
    times_transposed(dtype, n, hidden, inter, act.data(), dn + e * hidden * inter * elem, out.data(), block);
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t r = order[first + j];
      float* row = sum.data() + r / k * hidden;
      for (std::int64_t h = 0; h < hidden; ++h) row[h] += weights[r] * out[j * hidden + h];
    }
  }
  Tensor y = Tensor::empty({rows, hidden}, dtype, hidden_states.device());
  for (std::int64_t i = 0; i < rows * hidden; ++i) store(dtype, y.data_ptr(), i, sum[i]);
  return y;
}

}  // namespace tileops::cpu
