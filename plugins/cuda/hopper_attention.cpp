#include "hopper_attention.hpp"

#include "call_support.hpp"
#include "kernel_types.hpp"
#include "kernels/attention_prefill_wgmma.cuh"
#include "kernels/attention_prefill_ws.cuh"

namespace tileops::cuda {

std::optional<std::string> HopperAttentionKernel::refusal(const Call& call) {
  if (!gpu::attention_wgmma_built()) return "this build of the cuda plugin embeds no sm_90a machine code";
  if (call.dtype != DType::float16 && call.dtype != DType::bfloat16) {
    return "serves float16 and bfloat16, not " + std::string(dtype_name(call.dtype));
  }
  return std::nullopt;
}

HopperAttentionKernel::HopperAttentionKernel(const Call& call) : Impl(call), warp_size_(gpu::warp_size_of(call)) {}

namespace {

// The cp.async wgmma kernel where it serves the call, else the shared launcher.
void launch_hopper(const gpu::AttentionArgs& args, void* stream) {
  if (gpu::attention_wgmma_serves(args)) gpu::launch_attention_wgmma(args, stream);
  else gpu::launch_attention(args, 90, stream);
}

}  // namespace

HopperAttentionKernel::Result HopperAttentionKernel::forward(const Tensor& q, const Tensor& k, const Tensor& v) {
  gpu::DeviceGuard on(q.device().index());
  gpu::PrefillLaunch p = gpu::prepare_prefill(call_, q, k, v, warp_size_);
  launch_hopper(p.args, gpu::stream_of(q));
  return std::move(p.result);
}

std::optional<std::string> HopperWsAttentionKernel::refusal(const Call& call) {
  if (!gpu::attention_ws_built()) return "this build of the cuda plugin embeds no sm_90a machine code";
  return HopperAttentionKernel::refusal(call);
}

HopperWsAttentionKernel::HopperWsAttentionKernel(const Call& call)
    : Impl(call), warp_size_(gpu::warp_size_of(call)), sm_count_(gpu::sm_count_of(call)) {}

HopperWsAttentionKernel::Result HopperWsAttentionKernel::forward(const Tensor& q, const Tensor& k,
                                                                 const Tensor& v) {
  gpu::DeviceGuard on(q.device().index());
  gpu::PrefillLaunch p = gpu::prepare_prefill(call_, q, k, v, warp_size_);
  if (gpu::attention_ws_serves(p.args)) gpu::launch_attention_ws(p.args, sm_count_, gpu::stream_of(q));
  else launch_hopper(p.args, gpu::stream_of(q));
  return std::move(p.result);
}

}  // namespace tileops::cuda
