// libtileops_acme.so: the "acme" device type, a target that claims acme devices, and whole-op
// builders for RMSNormFwdOp and GemmFwdOp. Other ops on acme devices raise OpNotAvailableError.
#include <memory>

#include "acme_kernels.hpp"
#include "acme_runtime.hpp"
#include "tileops/extend/plugin.hpp"

TILEOPS_PLUGIN(acme, "1.0.0", registrar) {
  registrar.register_device_runtime(std::make_shared<acme::AcmeRuntime>());
  registrar.register_detector("acme", [](const tileops::Device& d) { return d.type().name() == "acme"; });
  registrar.register_kernel_builder("RMSNormFwdOp", "acme", acme::build_rms_norm);
  registrar.register_kernel_builder("GemmFwdOp", "acme", acme::build_gemm);
}
