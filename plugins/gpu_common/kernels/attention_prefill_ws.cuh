// The warp-specialised Hopper prefill kernel's launcher (attention_prefill_ws.cu), for the cuda
// plugin's cuda_gqa_attention_sm90_ws kernel type: TMA loads by a producer warpgroup, two
// consumer warpgroups on the warpgroup MMA. Same masks, scores and outputs as
// launch_attention_wgmma (attention_prefill_wgmma.cuh).
#pragma once

#include "../host/attention_launchers.hpp"

namespace tileops::gpu {

// Whether this build embeds the kernel's sm_90a machine code (TILEOPS_CUDA_ARCHS names 90a).
bool attention_ws_built();

// Whether the kernel serves these arguments: float16 or bfloat16, head_dim 64 or 128, at least
// one key, every pointer 16-byte aligned, and q, k and v laid out as TMA can address them
// (their head, row and sequence strides multiples of 16 bytes, below 2^40 bytes).
bool attention_ws_serves(const AttentionArgs& args);

// Requires attention_ws_built(), attention_ws_serves(args) and a device of compute capability
// 9.0 with `sm_count` multiprocessors (the grid's persistent blocks; below 1 counts as 1).
// Launches nothing for an empty batch or no queries; throws ValueError for sequences
// longer than 2^30 or a grid past 2^31 - 1 blocks, RuntimeError when the driver lacks
// cuTensorMapEncodeTiled or refuses to encode the tensor map of q, k or v (naming the map and
// the CUresult). A wait on the load pipeline that lasts about 9 s traps (the launch then
// fails) instead of hanging the device.
void launch_attention_ws(const AttentionArgs& args, int sm_count, void* stream);

}  // namespace tileops::gpu
