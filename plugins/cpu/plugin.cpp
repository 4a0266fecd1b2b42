// libtileops_cpu.so: fast cpu implementations of the in-tree ops' kernel interfaces. None is
// general, so each serves exactly the calls its refusal accepts, ahead of the reference.
#include "elementwise_kernels.hpp"
#include "norm_kernels.hpp"
#include "thread_pool.hpp"
#include "tileops/extend/plugin.hpp"
#include "tileops/logging.hpp"

TILEOPS_PLUGIN(cpu, TILEOPS_VERSION_STRING, registrar) {
  using namespace tileops::cpu;
  set_warning_handler(
      [](const std::string& message) { tileops::log_message(tileops::LogLevel::warn, "cpu plugin: " + message); });
  registrar.register_kernel_type<RMSNormKernel>("RMSNormFwdOp", "cpu_rms_norm");
  registrar.register_kernel_type<LayerNormKernel>("LayerNormFwdOp", "cpu_layer_norm");
  registrar.register_kernel_type<SoftmaxKernel>("SoftmaxFwdOp", "cpu_softmax");
  registrar.register_kernel_type<BatchNormTrainKernel>("BatchNormFwdOp", "cpu_batch_norm_train");
  registrar.register_kernel_type<BatchNormInferKernel>("BatchNormFwdOp", "cpu_batch_norm_infer");
  registrar.register_kernel_type<SiluAndMulKernel>("SiluAndMulFwdOp", "cpu_silu_and_mul");
  registrar.register_kernel_type<AddKernel>("AddFwdOp", "cpu_add");
  registrar.register_kernel_type<ReluKernel>("ReluFwdOp", "cpu_relu");
  registrar.register_kernel_type<AlibiKernel>("AlibiFwdOp", "cpu_alibi");
  registrar.register_kernel_type<BlasGemmKernel>("GemmFwdOp", "cpu_blas_gemm");
  registrar.register_kernel_type<DotRowsGemmKernel>("GemmFwdOp", "cpu_dot_rows_gemm");
  registrar.register_kernel_type<SumKernel>("SumFwdOp", "cpu_sum");
  registrar.register_kernel_type<ProdKernel>("ProdFwdOp", "cpu_prod");
}
