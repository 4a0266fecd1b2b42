// libtileops_cuda.so: the "cuda" device runtime (stream-ordered pool memory, current streams,
// copies, CUDA graphs) and CUDA kernels for the op set, from the sources shared with the rocm
// plugin (plugins/gpu_common), plus what is CUDA's own: GEMM through cuBLASLt, and the Hopper
// prefill attention (wgmma, and its warp-specialised TMA form) and MoE experts (wgmma).
#include "cublaslt_gemm.hpp"
#include "gpu_runtime.hpp"
#include "hopper_attention.hpp"
#include "hopper_moe.hpp"
#include "register_kernels.hpp"
#include "tileops/extend/plugin.hpp"

TILEOPS_PLUGIN(cuda, TILEOPS_VERSION_STRING, registrar) {
  registrar.register_device_runtime(tileops::gpu::runtime());
  tileops::gpu::register_kernels(registrar);
  registrar.add<tileops::cuda::CublasLtGemmKernel>("cuda_cublaslt_gemm");
  registrar.add<tileops::cuda::HopperAttentionKernel>("cuda_gqa_attention_sm90");
  registrar.add<tileops::cuda::HopperMoeExpertsKernel>("cuda_moe_experts_sm90");
  registrar.add<tileops::cuda::HopperWsAttentionKernel>("cuda_gqa_attention_sm90_ws");
}
