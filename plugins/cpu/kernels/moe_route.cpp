#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu_kernels.hpp"
#include "thread_pool.hpp"
#include "tileops/half.hpp"
#include "validate.hpp"

namespace tileops::cpu {
namespace {

struct RouteArgs {
  int64_t experts, top_k;
  bool sigmoid, renormalize;
  float scale;
  const float* bias;
  float* weights;
  int32_t* ids;
};

// Rows [r0, r1): scores, the picks by score + bias, and their weights.
template <class T>
void route_rows(const RouteArgs& a, const T* logits, int64_t r0, int64_t r1) {
  const auto n = static_cast<size_t>(a.experts);
  std::vector<float> scores(n), choice(n);
  std::vector<int32_t> order(n);
  // Larger first, the lower id among equals, NaN after every number: a strict weak order.
  const auto before = [&](int32_t x, int32_t y) {
    const float cx = choice[static_cast<size_t>(x)], cy = choice[static_cast<size_t>(y)];
    if (std::isnan(cx) != std::isnan(cy)) return std::isnan(cy);
    if (!std::isnan(cx) && cx != cy) return cx > cy;
    return x < y;
  };
  for (int64_t m = r0; m < r1; ++m) {
    const T* row = logits + m * a.experts;
    if (a.sigmoid) {
      for (size_t e = 0; e < n; ++e) scores[e] = 1.0f / (1.0f + std::exp(-static_cast<float>(row[e])));
    } else {
      float top = -INFINITY;
      for (size_t e = 0; e < n; ++e) top = std::max(top, static_cast<float>(row[e]));
      float sum = 0.0f;
      for (size_t e = 0; e < n; ++e) sum += scores[e] = std::exp(static_cast<float>(row[e]) - top);
      for (float& s : scores) s /= sum;
    }
    for (size_t e = 0; e < n; ++e) choice[e] = scores[e] + (a.bias != nullptr ? a.bias[e] : 0.0f);
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + a.top_k, order.end(), before);
    float picked = 0.0f;
    for (int64_t j = 0; j < a.top_k; ++j) picked += scores[static_cast<size_t>(order[static_cast<size_t>(j)])];
    const float norm = a.renormalize ? picked : 1.0f;
    for (int64_t j = 0; j < a.top_k; ++j) {
      const int32_t id = order[static_cast<size_t>(j)];
      a.ids[m * a.top_k + j] = id;
      a.weights[m * a.top_k + j] = scores[static_cast<size_t>(id)] / norm * a.scale;
    }
  }
}

}  // namespace

void moe_route(DType dtype, int64_t rows, int64_t experts, int64_t top_k, bool sigmoid, bool renormalize,
               float scale, const void* logits, const float* bias, float* weights, int32_t* ids) {
  constexpr const char* kName = "moe_route";
  check_float_dtype(kName, dtype);
  check_sizes(kName, {rows, experts, top_k});
  if (top_k < 1 || top_k > experts) {
    throw std::invalid_argument(std::string(kName) + ": top_k must be from 1 to the " + std::to_string(experts) +
                                " experts, got " + std::to_string(top_k));
  }
  check_buffer(kName, "logits", logits, checked_product(kName, rows, experts));
  check_buffer(kName, "weights", weights, checked_product(kName, rows, top_k));
  check_buffer(kName, "ids", ids, checked_product(kName, rows, top_k));
  if (rows == 0) return;
  const RouteArgs args{experts, top_k, sigmoid, renormalize, scale, bias, weights, ids};
  // A row reads its logits and does a few float operations and a partial sort per expert.
  const auto item_bytes = static_cast<int64_t>(experts * 16);
  const auto run = [&]<class T>() {
    parallel_for(rows, item_bytes,
                 [&](int64_t r0, int64_t r1) { route_rows(args, static_cast<const T*>(logits), r0, r1); });
  };
  switch (dtype) {
    case DType::float16: run.template operator()<Half>(); break;
    case DType::bfloat16: run.template operator()<BFloat16>(); break;
    default: run.template operator()<float>();
  }
}

}  // namespace tileops::cpu
