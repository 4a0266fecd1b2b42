// Breaks one rule of kernel types that only the op catalogue can check (see
// tests/plugin_host/registration_review_test.cpp): registers GeneralRMSNorm for RMSNormFwdOp as 'rule_general_rms_norm'.
#include "stub_kernels.hpp"
#include "tileops/extend/plugin.hpp"

TILEOPS_PLUGIN(rule_second_general, "0.1.0", registrar) {
  registrar.register_kernel_type<tileops::test_plugins::GeneralRMSNorm>("RMSNormFwdOp", "rule_general_rms_norm");
}
