// The routed experts' grouped GEMMs on Hopper's warpgroup MMA (moe_wgmma.cu, sm_90a machine
// code only), for launch_moe_experts when the caller prefers them (MoeExpertsArgs::hopper).
// CUDA only.
#pragma once

#include "../host/moe_launchers.hpp"
#include "launch.cuh"
#include "moe_experts.cuh"

namespace tileops::gpu {

// Whether the wgmma GEMMs can run on the current device: built (moe_wgmma_built), compute
// capability 9.0, and the shared memory of their pipelines (193 KiB a block). The call's shapes
// must also pass moe_mma_shapes (the same as the mma.sync GEMMs'). Reads the device's facts
// once per device.
bool moe_wgmma_serves();

// Both products over the groups the grouping steps left in `w` (offsets, tile_start, sorted),
// with the same results and layout as launch_moe_mma: act = act(gate) * up (float32) into
// w.act, then the down product (act taken as a high and a low 16-bit part) into w.out; the
// weighted sum over a token's routes is the caller's (combine_kernel). Requires
// moe_wgmma_serves() and moe_mma_shapes(args, routes).
void launch_moe_wgmma(const MoeExpertsArgs& args, const ExpertsWorkspace& w, NativeStream stream);

}  // namespace tileops::gpu
