#include "moe_reference.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "common/activations.hpp"
#include "common/dtype_dispatch.hpp"

namespace tileops::ref {

MoERouteFwdOp::MoeRoute::Result MoERouteFwdOp::MoeRoute::forward(const Tensor& router_logits,
                                                                 const Tensor& correction_bias) {
  const std::int64_t rows = router_logits.shape()[0];
  const std::int64_t experts = router_logits.shape()[1];
  const std::int64_t k = call_.top_k;
  Result r{Tensor::empty({rows, k}, DType::float32, router_logits.device()),
           Tensor::empty({rows, k}, DType::int32, router_logits.device())};
  const float* bias = correction_bias.defined() ? correction_bias.data<float>() : nullptr;
  std::vector<double> scores(static_cast<std::size_t>(experts));
  std::vector<double> choice(static_cast<std::size_t>(experts));
  std::vector<std::int32_t> order(static_cast<std::size_t>(experts));
  visit_dtype(router_logits.dtype(), [&]<class T>(TypeTag<T>) {
    const T* logits = router_logits.data<T>();
    for (std::int64_t m = 0; m < rows; ++m) {
      const T* row = logits + m * experts;
      if (call_.sigmoid) {
        for (std::int64_t e = 0; e < experts; ++e) scores[e] = 1.0 / (1.0 + std::exp(-load(row[e])));
      } else {
        double top = -INFINITY;
        for (std::int64_t e = 0; e < experts; ++e) top = std::max(top, load(row[e]));
        double sum = 0;
        for (std::int64_t e = 0; e < experts; ++e) sum += scores[e] = std::exp(load(row[e]) - top);
        for (double& s : scores) s /= sum;
      }
      for (std::int64_t e = 0; e < experts; ++e) choice[e] = scores[e] + (bias ? bias[e] : 0.0);
      std::iota(order.begin(), order.end(), 0);
      // Larger first; among equals the lower id, as the stable order keeps them.
      std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) { return choice[a] > choice[b]; });
      double picked = 0;
      for (std::int64_t j = 0; j < k; ++j) picked += scores[order[j]];
      const double norm = call_.renormalize ? picked : 1.0;
      for (std::int64_t j = 0; j < k; ++j) {
        r.topk_ids.data<std::int32_t>()[m * k + j] = order[j];
        r.topk_weights.data<float>()[m * k + j] = static_cast<float>(scores[order[j]] / norm * call_.scale);
      }
    }
  });
  return r;
}

Tensor MoEExpertsFwdOp::MoeExperts::forward(const Tensor& hidden_states, const Tensor& topk_weights,
                                            const Tensor& topk_ids, const Tensor& w_gate_up, const Tensor& w_down) {
  const std::int64_t rows = hidden_states.shape()[0];
  const std::int64_t hidden = hidden_states.shape()[1];
  const std::int64_t k = topk_ids.shape()[1];
  const std::int64_t inter = w_down.shape()[2];
  const bool gelu = call_.activation == ExpertActivation::gelu_and_mul;
  Tensor y = Tensor::empty({rows, hidden}, hidden_states.dtype(), hidden_states.device());
  std::vector<double> x(static_cast<std::size_t>(hidden));
  std::vector<double> act(static_cast<std::size_t>(inter));
  std::vector<double> sum(static_cast<std::size_t>(hidden));
  visit_dtype(hidden_states.dtype(), [&]<class T>(TypeTag<T>) {
    for (std::int64_t m = 0; m < rows; ++m) {
      for (std::int64_t h = 0; h < hidden; ++h) x[h] = load(hidden_states.data<T>()[m * hidden + h]);
      std::fill(sum.begin(), sum.end(), 0.0);
      for (std::int64_t j = 0; j < k; ++j) {
        const std::int64_t e = topk_ids.data<std::int32_t>()[m * k + j];
        const T* gate_up = w_gate_up.data<T>() + e * 2 * inter * hidden;
        const T* down = w_down.data<T>() + e * hidden * inter;
        for (std::int64_t i = 0; i < inter; ++i) {
          double gate = 0;
          double up = 0;
          for (std::int64_t h = 0; h < hidden; ++h) {
            gate += load(gate_up[i * hidden + h]) * x[h];
            up += load(gate_up[(inter + i) * hidden + h]) * x[h];
          }
          act[i] = (gelu ? gelu_erf(gate) : silu(gate)) * up;
        }
        const double weight = topk_weights.data<float>()[m * k + j];
        for (std::int64_t h = 0; h < hidden; ++h) {
          double dot = 0;
          for (std::int64_t i = 0; i < inter; ++i) dot += load(down[h * inter + i]) * act[i];
          sum[h] += weight * dot;
        }
      }
      for (std::int64_t h = 0; h < hidden; ++h) y.data<T>()[m * hidden + h] = store<T>(sum[h]);
    }
  });
  return y;
}

}  // namespace tileops::ref
