#include "tileops/ops/swiglu_mlp.hpp"

#include <vector>

#include "tileops/extend/identity.hpp"

namespace tileops {
namespace {

std::vector<std::string_view> injected_names(bool gate_up, bool act, bool down) {
  std::vector<std::string_view> names;
  if (gate_up) names.emplace_back("gate_up");
  if (act) names.emplace_back("act");
  if (down) names.emplace_back("down");
  return names;
}

}  // namespace

void SwiGLUMLPFwdOp::hold_stages(std::shared_ptr<GemmFwdOp> gate_up, std::shared_ptr<SiluAndMulFwdOp> act,
                                 std::shared_ptr<GemmFwdOp> down) {
  for (std::string_view name : injected_names(gate_up != nullptr, act != nullptr, down != nullptr)) {
    check_injected_parameter(name);
  }
  // Every sub-op's construction arguments are settled here, so all are held before any call.
  gate_up_ = &delegate_for<GemmFwdOp>("gate_up", Identity(), std::move(gate_up), false, true);
  act_ = &delegate_for<SiluAndMulFwdOp>("act", Identity(), std::move(act));
  down_ = &delegate_for<GemmFwdOp>("down", Identity(), std::move(down), false, true);
}

OpOutputs SwiGLUMLPFwdOp::forward(const CallArgs& args) {
  const Tensor h = (*gate_up_)(args.inputs[0], args.inputs[1]);
  const Tensor a = (*act_)(h);
  return outputs_of((*down_)(a, args.inputs[2]));
}

}  // namespace tileops
