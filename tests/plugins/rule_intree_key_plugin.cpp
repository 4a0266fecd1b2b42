// Breaks one rule of kernel types that only the op catalogue can check (see
// tests/plugin_host/registration_review_test.cpp): registers StubRMSNorm for RMSNormFwdOp as 'rms_norm_reference'.
#include "stub_kernels.hpp"
#include "tileops/extend/plugin.hpp"

TILEOPS_PLUGIN(rule_intree_key, "0.1.0", registrar) {
  registrar.register_kernel_type<tileops::test_plugins::StubRMSNorm>("RMSNormFwdOp", "rms_norm_reference");
}
