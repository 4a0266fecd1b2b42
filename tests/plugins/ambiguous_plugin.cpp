// A cpu RMSNorm without preferred_over: it ties with the cpu plugin's cpu_rms_norm on every call
// both accept. The host loads it with a warning; dispatch then names both plugins.
#include "stub_kernels.hpp"
#include "tileops/extend/plugin.hpp"

TILEOPS_PLUGIN(ambiguous, "0.1.0", registrar) {
  registrar.register_kernel_type<tileops::test_plugins::StubRMSNorm>("RMSNormFwdOp", "ambiguous_rms_norm");
}
