// A relu kernel type preferred over the cpu plugin's that throws std::invalid_argument: the
// call must fail with a BackendError naming this plugin, the op and the key.
#include "stub_kernels.hpp"
#include "tileops/extend/plugin.hpp"

TILEOPS_PLUGIN(throwing_relu, "0.1.0", registrar) {
  registrar.register_kernel_type<tileops::test_plugins::ThrowingRelu>("ReluFwdOp", "throwing_relu");
}
