// Breaks one rule of kernel types that only the op catalogue can check (see
// tests/plugin_host/registration_review_test.cpp): registers PrefersOtherInterfaceBatchNorm for BatchNormFwdOp as 'rule_prefers_other_interface'.
#include "stub_kernels.hpp"
#include "tileops/extend/plugin.hpp"

TILEOPS_PLUGIN(rule_pref_other, "0.1.0", registrar) {
  registrar.register_kernel_type<tileops::test_plugins::PrefersOtherInterfaceBatchNorm>("BatchNormFwdOp", "rule_prefers_other_interface");
}
