// libtileops_cpu.so: fast cpu implementations of the in-tree ops' kernel interfaces. None is
// general, so each serves exactly the calls its refusal accepts, ahead of the reference.
#include "attention_kernels.hpp"
#include "elementwise_kernels.hpp"
#include "embedding_kernels.hpp"
#include "moe_kernels.hpp"
#include "norm_kernels.hpp"
#include "pool_kernels.hpp"
#include "rope_kernels.hpp"
#include "thread_pool.hpp"
#include "tileops/extend/plugin.hpp"
#include "tileops/logging.hpp"

TILEOPS_PLUGIN(cpu, TILEOPS_VERSION_STRING, registrar) {
  using namespace tileops::cpu;
  set_warning_handler(
      [](const std::string& message) { tileops::log_message(tileops::LogLevel::warn, "cpu plugin: " + message); });
  registrar.add<RMSNormKernel>("cpu_rms_norm");
  registrar.add<FusedAddRMSNormKernel>("cpu_fused_add_rms_norm");
  registrar.add<LayerNormKernel>("cpu_layer_norm");
  registrar.add<SoftmaxKernel>("cpu_softmax");
  registrar.add<BatchNormTrainKernel>("cpu_batch_norm_train");
  registrar.add<BatchNormInferKernel>("cpu_batch_norm_infer");
  registrar.add<SiluAndMulKernel>("cpu_silu_and_mul");
  registrar.add<GeluAndMulKernel>("cpu_gelu_and_mul");
  registrar.add<AddKernel>("cpu_add");
  registrar.add<ReluKernel>("cpu_relu");
  registrar.add<GeluKernel>("cpu_gelu");
  registrar.add<AlibiKernel>("cpu_alibi");
  registrar.add<EmbeddingKernel>("cpu_embedding");
  registrar.add<MoeRouteKernel>("cpu_moe_route");
  registrar.add<MoeExpertsKernel>("cpu_moe_experts");
  registrar.add<RopeKernel>("cpu_rope");
  registrar.add<RopeInterleavedKernel>("cpu_rope_interleaved");
  registrar.add<LongRopeKernel>("cpu_long_rope");
  registrar.add<MaxPool2dKernel>("cpu_max_pool2d");
  registrar.add<AvgPool2dKernel>("cpu_avg_pool2d");
  registrar.add<BlasGemmKernel>("cpu_blas_gemm");
  registrar.add<DotRowsGemmKernel>("cpu_dot_rows_gemm");
  registrar.add<SumKernel>("cpu_sum");
  registrar.add<ProdKernel>("cpu_prod");
  registrar.add<MeanKernel>("cpu_mean");
  registrar.add<AttentionKernel>("cpu_gqa_attention");
  registrar.add<DecodeKernel>("cpu_gqa_decode");
  registrar.add<PagedDecodeKernel>("cpu_gqa_paged_decode");
  registrar.add<CacheAppendKernel>("cpu_kv_cache_append");
  registrar.add<PagedCacheAppendKernel>("cpu_paged_kv_cache_append");
}
