// What SoftcapFwdOp writes by hand: its class record, forward, and the reference kernel.
#include "softcap.hpp"

#include <cmath>
#include <vector>

namespace app {

const tileops::OpClass& SoftcapFwdOp::op_class() {
  static const tileops::OpClass cls = tileops::OpClass::define("SoftcapFwdOp")
                                          .interface<SoftcapFwdInterface>("softcap")
                                          .kernel_type<SoftcapReference>("softcap_reference")
                                          .build();
  return cls;
}

tileops::OpOutputs SoftcapFwdOp::forward(const tileops::CallArgs& args) {
  const tileops::Tensor x = args.inputs[0].contiguous();
  SoftcapCall call;
  call.device = x.device();
  call.cap = cap();
  call.dtype = x.dtype();
  return {kernel_for<SoftcapFwdInterface>("softcap", call).forward(x)};
}

tileops::Tensor SoftcapReference::forward(const tileops::Tensor& x) {
  std::vector<double> values = x.to_doubles();
  for (double& v : values) v = call_.cap * std::tanh(v / call_.cap);
  return tileops::Tensor::from_doubles(values, x.shape(), x.dtype());
}

}  // namespace app
