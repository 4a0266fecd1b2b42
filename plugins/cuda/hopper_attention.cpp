#include "hopper_attention.hpp"

#include "call_support.hpp"
#include "kernel_types.hpp"
#include "kernels/attention_prefill_wgmma.cuh"

namespace tileops::cuda {

std::optional<std::string> HopperAttentionKernel::refusal(const Call& call) {
  if (!gpu::attention_wgmma_built()) return "this build of the cuda plugin embeds no sm_90a machine code";
  if (call.dtype != DType::float16 && call.dtype != DType::bfloat16) {
    return "serves float16 and bfloat16, not " + std::string(dtype_name(call.dtype));
  }
  return std::nullopt;
}

HopperAttentionKernel::HopperAttentionKernel(const Call& call) : Impl(call), warp_size_(gpu::warp_size_of(call)) {}

HopperAttentionKernel::Result HopperAttentionKernel::forward(const Tensor& q, const Tensor& k, const Tensor& v) {
  gpu::DeviceGuard on(q.device().index());
  gpu::PrefillLaunch p = gpu::prepare_prefill(call_, q, k, v, warp_size_);
  if (gpu::attention_wgmma_serves(p.args)) gpu::launch_attention_wgmma(p.args, gpu::stream_of(q));
  else gpu::launch_attention(p.args, 90, gpu::stream_of(q));
  return std::move(p.result);
}

}  // namespace tileops::cuda
