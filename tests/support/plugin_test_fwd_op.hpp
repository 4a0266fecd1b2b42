// PluginTestFwdOp, the op the test plugin corpus registers for: y = x * m, where m is what the
// serving kernel of interface "plugin_test" returns for 1 (factor, from the in-tree reference).
#pragma once

#include <cstdint>

#include "tileops/op.hpp"

namespace tileops::test {

class PluginTestFwdOp final : public Op {
 public:
  // Defines the class on first use, so that a plugin host loading the corpus afterwards checks
  // the corpus's kernel types against it.
  static const OpClass& op_class();
  explicit PluginTestFwdOp(std::int64_t factor = 1, Target target = {});
  Tensor operator()(const Tensor& x);

 protected:
  OpOutputs forward(const CallArgs& args) override;

 private:
  std::int64_t factor_;
};

}  // namespace tileops::test
