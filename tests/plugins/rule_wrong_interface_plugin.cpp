// Breaks one rule of kernel types that only the op catalogue can check (see
// tests/plugin_host/registration_review_test.cpp): registers StubSoftmax for RMSNormFwdOp as 'rule_wrong_interface_softmax'.
#include "stub_kernels.hpp"
#include "tileops/extend/plugin.hpp"

TILEOPS_PLUGIN(rule_wrong_interface, "0.1.0", registrar) {
  registrar.register_kernel_type<tileops::test_plugins::StubSoftmax>("RMSNormFwdOp", "rule_wrong_interface_softmax");
}
