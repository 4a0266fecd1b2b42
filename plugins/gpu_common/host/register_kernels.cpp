#include "register_kernels.hpp"

#include <string>

#include "kernel_types.hpp"

namespace tileops::gpu {

void register_kernels(Registrar& r) {
  const auto key = [](const char* name) { return std::string(kDeviceType) + "_" + name; };
  r.add<RMSNormKernel>(key("rms_norm"));
  r.add<FusedAddRMSNormKernel>(key("fused_add_rms_norm"));
  r.add<LayerNormKernel>(key("layer_norm"));
  r.add<SoftmaxKernel>(key("softmax"));
  r.add<BatchNormTrainKernel>(key("batch_norm_train"));
  r.add<BatchNormInferKernel>(key("batch_norm_infer"));
  r.add<RopeKernel>(key("rope"));
  r.add<RopeInterleavedKernel>(key("rope_interleaved"));
  r.add<LongRopeKernel>(key("long_rope"));
  r.add<SiluAndMulKernel>(key("silu_and_mul"));
  r.add<GeluAndMulKernel>(key("gelu_and_mul"));
  r.add<AddKernel>(key("add"));
  r.add<ReluKernel>(key("relu"));
  r.add<GeluKernel>(key("gelu"));
  r.add<AlibiKernel>(key("alibi"));
  r.add<SumKernel>(key("sum"));
  r.add<ProdKernel>(key("prod"));
  r.add<MeanKernel>(key("mean"));
  r.add<TiledGemmKernel>(key("tiled_gemm"));  // before the dot-rows GEMM, which is preferred over it
  r.add<DotRowsGemmKernel>(key("dot_rows_gemm"));
  r.add<AttentionKernel>(key("gqa_attention"));
  r.add<DecodeKernel>(key("gqa_decode"));
  r.add<PagedDecodeKernel>(key("gqa_paged_decode"));
  r.add<CacheAppendKernel>(key("kv_cache_append"));
  r.add<PagedCacheAppendKernel>(key("paged_kv_cache_append"));
  r.add<EmbeddingKernel>(key("embedding"));
  r.add<MoeRouteKernel>(key("moe_route"));
  r.add<MoeExpertsKernel>(key("moe_experts"));
  r.add<MaxPool2dKernel>(key("max_pool2d"));
  r.add<AvgPool2dKernel>(key("avg_pool2d"));
}

}  // namespace tileops::gpu
