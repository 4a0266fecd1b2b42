// cuda_gqa_attention_sm90: dense prefill on Hopper's warpgroup MMA (compute capability 9.0),
// preferred over the shared cuda_gqa_attention, whose sm_80 tensor-core kernel reaches about
// two thirds of what PyTorch's flash attention does on an H200. It serves float16 and
// bfloat16; calls at head dims other than 64 and 128, or on views not 16-byte aligned, run the
// shared launcher as cuda_gqa_attention would. A build without sm_90a machine code
// (TILEOPS_CUDA_ARCHS without 90a) refuses every call, saying so.
#pragma once

#include <optional>
#include <string>

#include "tileops/extend/ops/attention.hpp"

namespace tileops::cuda {

class HopperAttentionKernel final : public ops::GroupedQueryAttentionFwdOp::GqaAttention::Impl<> {
 public:
  static constexpr DeviceTypes devices{"cuda"};
  static constexpr ArchList supported_archs{90};
  static constexpr KeyList preferred_over{"cuda_gqa_attention"};
  static std::optional<std::string> refusal(const Call& call);
  explicit HopperAttentionKernel(const Call& call);

  Result forward(const Tensor& q, const Tensor& k, const Tensor& v) override;

 private:
  int warp_size_;
};

// cuda_gqa_attention_sm90_ws: the same calls on the warp-specialised form of the Hopper kernel
// (TMA loads by a producer warpgroup, two consumer warpgroups taking turns on the warpgroup MMA),
// preferred over cuda_gqa_attention_sm90. Calls it does not serve (attention_ws_serves) run as
// cuda_gqa_attention_sm90 would run them; it refuses what that kernel type refuses.
class HopperWsAttentionKernel final : public ops::GroupedQueryAttentionFwdOp::GqaAttention::Impl<> {
 public:
  static constexpr DeviceTypes devices{"cuda"};
  static constexpr ArchList supported_archs{90};
  static constexpr KeyList preferred_over{"cuda_gqa_attention_sm90"};
  static std::optional<std::string> refusal(const Call& call);
  explicit HopperWsAttentionKernel(const Call& call);

  Result forward(const Tensor& q, const Tensor& k, const Tensor& v) override;

 private:
  int warp_size_;
  int sm_count_;  // the persistent kernel's grid
};

}  // namespace tileops::cuda
