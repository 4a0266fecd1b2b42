// The Hopper prefill kernel's launcher (attention_prefill_wgmma.cu), for the cuda plugin's
// cuda_gqa_attention_sm90 kernel type.
#pragma once

#include "../host/attention_launchers.hpp"

namespace tileops::gpu {

// Whether this build embeds the kernel's sm_90a machine code (TILEOPS_CUDA_ARCHS names 90a).
bool attention_wgmma_built();

// Whether the kernel serves these arguments: float16 or bfloat16, head_dim 64 or 128, every
// pointer 16-byte aligned.
bool attention_wgmma_serves(const AttentionArgs& args);

// Requires attention_wgmma_built(), attention_wgmma_serves(args) and a device of compute
// capability 9.0. Launches nothing for an empty batch or no queries; throws ValueError for
// sequences longer than 2^30 or a grid past 2^31 - 1 blocks.
void launch_attention_wgmma(const AttentionArgs& args, void* stream);

}  // namespace tileops::gpu
