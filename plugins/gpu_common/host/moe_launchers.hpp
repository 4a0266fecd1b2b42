// The host-side interface of the shared mixture-of-experts kernels (../kernels/moe.cu), with
// the rules of launchers.hpp.
#pragma once

#include <cstdint>

#include "fault_record.hpp"
#include "tileops/dtype.hpp"

namespace tileops::gpu {

// The router: for each of `rows` rows of `logits` (contiguous [rows, experts] in `dtype`,
// experts <= 4096), softmax or sigmoid scores in float, the top_k largest of score + bias
// (bias float32 [experts] or null) picked, the larger first and the lower id first among
// equals. weights (float32 [rows, top_k]) get the picked scores, divided by their sum when
// `renormalize`, times `scale`; ids (int32 [rows, top_k]) the experts.
struct MoeRouteArgs {
  const void* logits;
  DType dtype;
  const float* bias;
  float* weights;
  std::int32_t* ids;
  std::int64_t rows, experts, top_k;
  bool sigmoid, renormalize;
  float scale;
  int warp_size;  // threads of a warp on the device (GpuRuntime::warp_size): the launch geometry
};
void launch_moe_route(const MoeRouteArgs& args, void* stream);

// The routed experts: y[m] = sum_k weights[m, k] * w_down[e] . act(gate) * up over the routes
// (m, k) with e = ids[m, k] in [0, experts); an id outside is recorded in `faults` and its
// route left out. x contiguous [rows, hidden]; w_gate_up [experts, 2 inter, hidden]; w_down
// [experts, hidden, inter]; y [rows, hidden]; all in `dtype`; rows * top_k < 2^31 routes
// (ValueError otherwise). The workspace is the caller's, on the device, of
// moe_experts_workspace_bytes(rows * top_k, experts, hidden, inter) bytes, 32-byte aligned.
// Routes are grouped by expert and only experts some route picks read their weights. The
// products run as GEMVs, which read an expert's weights once per eight routes, or, chosen by
// the shapes alone (float16 or bfloat16, at least four routes per expert on average, hidden
// and inter multiples of 64, 16-byte aligned x and weights) on CUDA devices of compute
// capability 8.0 or later with 144 KiB of shared memory per block, as grouped GEMMs on tensor
// cores (mma.sync), which read them once per 128 routes; with `hopper`, on a device of compute
// capability 9.0 running a build with sm_90a machine code, those GEMMs run on warpgroup MMA
// (wgmma) instead, with the same results. Either way the products accumulate
// in float32 and act(gate) * up is kept in float32 (the tensor cores take it as a high and a
// low part in `dtype`, about 16 significant bits; in float16 an |act| above 65504 overflows
// there, where the GEMVs would keep it).
struct MoeExpertsArgs {
  const void* x;
  const float* weights;
  const std::int32_t* ids;
  const void* w_gate_up;
  const void* w_down;
  void* y;
  void* workspace;
  DType dtype;
  std::int64_t rows, top_k, experts, hidden, inter;
  bool gelu;
  FaultRecord* faults;
  int warp_size;  // threads of a warp on the device (GpuRuntime::warp_size): the launch geometry
  bool hopper = false;  // prefer the wgmma GEMMs where they serve (CUDA: cuda_moe_experts_sm90)
};
// The workspace of launch_moe_experts: the groups' offsets, counts, row tile starts, the list of
// experts with routes, sorted routes and places (int32), act [routes, inter] and the experts'
// outputs [routes, hidden] (float32), each part rounded up to 32 bytes.
std::int64_t moe_experts_workspace_bytes(std::int64_t routes, std::int64_t experts, std::int64_t hidden,
                                         std::int64_t inter);
void launch_moe_experts(const MoeExpertsArgs& args, void* stream);

// Whether this build embeds the wgmma GEMMs' sm_90a machine code (TILEOPS_CUDA_ARCHS names 90a).
// CUDA builds only (moe_wgmma.cu).
bool moe_wgmma_built();

}  // namespace tileops::gpu
