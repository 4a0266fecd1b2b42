#include "support/plugin_test_fwd_op.hpp"

#include <array>
#include <fstream>
#include <sstream>

#include "plugins/plugin_test_types.hpp"
#include "signature/signature_plan.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/op_class_builder.hpp"

namespace tileops::test {
namespace {

using test_plugins::PluginTestCall;
using test_plugins::PluginTestInterface;

// The in-tree, general implementation: returns x times the factor.
class PluginTestReference final : public Kernel, public PluginTestInterface {
 public:
  static constexpr DeviceTypes devices{"cpu", "plugdev"};
  static constexpr bool general = true;
  explicit PluginTestReference(const PluginTestCall& call) : factor_(call.factor) {}
  std::int64_t forward(std::int64_t x) override { return x * factor_; }

 private:
  std::int64_t factor_;
};

std::string manifest_text() {
  std::ifstream in(std::string(TILEOPS_TEST_DATA_DIR) + "/plugin_manifests/plugin_test.yaml");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

const OpClass& PluginTestFwdOp::op_class() {
  static const OpClass cls = OpClass::define(test_plugins::kOp)
                                 .plan(SignaturePlan::from_yaml(manifest_text(), test_plugins::kOp, "plugin_test.yaml"))
                                 .interface<PluginTestInterface>("plugin_test")
                                 .kernel_type<PluginTestReference>("plugin_test_reference")
                                 .build();
  return cls;
}

PluginTestFwdOp::PluginTestFwdOp(std::int64_t factor, Target target)
    : Op(op_class(), {{"factor", factor}}, std::move(target)), factor_(factor) {}

Tensor PluginTestFwdOp::operator()(const Tensor& x) {
  const std::array<Tensor, 1> inputs{x};
  return call(CallArgs(inputs)).front();
}

OpOutputs PluginTestFwdOp::forward(const CallArgs& args) {
  const Tensor& x = args.inputs[0];
  PluginTestCall call;
  call.device = x.device();
  call.factor = factor_;
  const std::int64_t m = kernel_for<PluginTestInterface>("plugin_test", call).forward(1);
  Tensor y = Tensor::empty(x.shape(), DType::float32, x.device());
  for (std::int64_t i = 0; i < x.numel(); ++i) y.set(i, x.get(i) * static_cast<double>(m));
  return {y};
}

}  // namespace tileops::test
