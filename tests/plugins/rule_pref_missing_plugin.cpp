// Breaks one rule of kernel types that only the op catalogue can check (see
// tests/plugin_host/registration_review_test.cpp): registers PrefersMissingRMSNorm for RMSNormFwdOp as 'rule_prefers_missing'.
#include "stub_kernels.hpp"
#include "tileops/extend/plugin.hpp"

TILEOPS_PLUGIN(rule_pref_missing, "0.1.0", registrar) {
  registrar.register_kernel_type<tileops::test_plugins::PrefersMissingRMSNorm>("RMSNormFwdOp", "rule_prefers_missing");
}
