#include <algorithm>
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

// The sequence length that picks the factors: the largest position + 1, else the length of
// x's sequence axis. Positions on a device are read back to the host (a synchronisation);
// meta positions (a graph being captured) count as the sequence axis.
std::int64_t sequence_length(const Tensor& x, const Tensor& positions, bool heads_first) {
  const std::int64_t seq = x.shape()[heads_first ? 2 : 1];
  if (!positions.defined() || positions.device().is_meta()) return seq;
  const Tensor on_host = positions.device().is_cpu() ? positions : positions.to(Device::cpu());
  const std::int64_t* p = on_host.data<std::int64_t>();
  const std::int64_t n = on_host.numel();
  return n == 0 ? 0 : *std::max_element(p, p + n) + 1;
}

}  // namespace

OpOutputs LongRoPEFwdOp::forward(const CallArgs& args) {
  using Rope = ops::LongRoPEFwdOp::Rope;
  const Tensor x = args.inputs[0].contiguous();
  const Tensor positions = rope_detail::contiguous_positions(args.inputs[1]);
  const Rope::Call call = rope_detail::rope_call<Rope::Call>(
      x, *this, Rope::RopeForm::neox, attention_scale(max_position_embeddings(), original_max_position_embeddings()));
  const bool long_sequence =
      sequence_length(x, positions, call.layout == Rope::RopeLayout::bhsd) > original_max_position_embeddings();
  // The factors as this call's device holds them.
  const Tensor& factors = std::get<Tensor>(call_params().at(long_sequence ? "long_factor" : "short_factor"));
  return outputs_of(kernel_for<Rope>(call).forward(x, positions, factors.contiguous()));
}

}  // namespace tileops
