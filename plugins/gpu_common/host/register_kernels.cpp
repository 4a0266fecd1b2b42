#include "register_kernels.hpp"

#include <string>

#include "kernel_types.hpp"

namespace tileops::gpu {

void register_kernels(Registrar& r) {
  const auto key = [](const char* name) { return std::string(kDeviceType) + "_" + name; };
  r.register_kernel_type<RMSNormKernel>("RMSNormFwdOp", key("rms_norm"));
  r.register_kernel_type<LayerNormKernel>("LayerNormFwdOp", key("layer_norm"));
  r.register_kernel_type<SoftmaxKernel>("SoftmaxFwdOp", key("softmax"));
  r.register_kernel_type<BatchNormTrainKernel>("BatchNormFwdOp", key("batch_norm_train"));
  r.register_kernel_type<BatchNormInferKernel>("BatchNormFwdOp", key("batch_norm_infer"));
  r.register_kernel_type<RopeKernel>("RopeFwdOp", key("rope"));
  r.register_kernel_type<SiluAndMulKernel>("SiluAndMulFwdOp", key("silu_and_mul"));
  r.register_kernel_type<AddKernel>("AddFwdOp", key("add"));
  r.register_kernel_type<ReluKernel>("ReluFwdOp", key("relu"));
  r.register_kernel_type<AlibiKernel>("AlibiFwdOp", key("alibi"));
  r.register_kernel_type<SumKernel>("SumFwdOp", key("sum"));
  r.register_kernel_type<ProdKernel>("ProdFwdOp", key("prod"));
  r.register_kernel_type<DotRowsGemmKernel>("GemmFwdOp", key("dot_rows_gemm"));
}

}  // namespace tileops::gpu
