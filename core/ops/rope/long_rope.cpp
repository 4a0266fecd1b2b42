#include <cmath>
#include <variant>

#include "rope_call.hpp"
#include "tileops/extend/ops/rope.hpp"
#include "tileops/ops/rope.hpp"

namespace tileops {
namespace {

// Phi-3's attention factor: 1 without extension, else sqrt(1 + ln(extension) / ln(original)).
double attention_scale(std::int64_t max_positions, std::int64_t original_max_positions) {
  const double extension = static_cast<double>(max_positions) / static_cast<double>(original_max_positions);
  if (extension <= 1.0) return 1.0;
  return std::sqrt(1.0 + std::log(extension) / std::log(static_cast<double>(original_max_positions)));
}

}  // namespace

// The kernel picks the factors: positions may live on a device, and reading them back here
// would synchronise it.
OpOutputs LongRoPEFwdOp::forward(const CallArgs& args) {
  using Rope = ops::LongRoPEFwdOp::Rope;
  const Tensor x = args.inputs[0].contiguous();
  const Tensor positions = rope_detail::contiguous_positions(args.inputs[1]);
  Rope::Call call = rope_detail::rope_call<Rope::Call>(
      x, *this, Rope::RopeForm::neox, attention_scale(max_position_embeddings(), original_max_position_embeddings()));
  call.original_max_positions = original_max_position_embeddings();
  // The factors as this call's device holds them.
  const Tensor& short_factor = std::get<Tensor>(call_params().at("short_factor"));
  const Tensor& long_factor = std::get<Tensor>(call_params().at("long_factor"));
  return outputs_of(kernel_for<Rope>(call).forward(x, positions, short_factor.contiguous(), long_factor.contiguous()));
}

}  // namespace tileops
