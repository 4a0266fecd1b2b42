// The tensor-core prefill kernel's launcher (attention_prefill_mma.cu), for launch_attention.
#pragma once

#include "../host/attention_launchers.hpp"

namespace tileops::gpu {

// Requires attention_uses_tensor_cores(args, arch) and a device of compute capability 8.0 or
// later. CUDA only: the HIP build has no such kernel (attention_uses_tensor_cores is false).
void launch_attention_mma(const AttentionArgs& args, void* stream);

}  // namespace tileops::gpu
