// The routed experts' grouped GEMMs on tensor cores (moe_mma.cu), for launch_moe_experts.
// CUDA only: the HIP build has no such kernels and runs the GEMVs.
#pragma once

#include <cstdint>

#include "../host/moe_launchers.hpp"
#include "launch.cuh"
#include "moe_experts.cuh"

namespace tileops::gpu {

// Whether the grouped GEMMs serve a call, by its shapes alone: float16 or bfloat16, hidden and
// inter multiples of 64, 16-byte aligned x and weights, and on average at least four routes per
// expert (below that the GEMVs, which read each weight row about once, keep decode).
bool moe_mma_shapes(const MoeExpertsArgs& args, std::int64_t routes);

// Both products over the groups the grouping steps left in `w` (offsets, tile_start, sorted):
// act = act(gate) * up into w.act and the down product into w.out, as the GEMVs write them.
// Requires moe_mma_shapes. Returns false, launching nothing, when the current device cannot run
// them (compute capability below 8.0, an image JIT-compiled from PTX, too little shared
// memory); reads the device's facts once per device.
bool launch_moe_mma(const MoeExpertsArgs& args, const ExpertsWorkspace& w, NativeStream stream);

}  // namespace tileops::gpu
