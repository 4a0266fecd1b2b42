// What SoftcapFwdOp writes by hand: its forward and its reference kernel's body. Everything else
// (the op class, the kernel interface ops::SoftcapFwdOp::Softcap, the reference kernel's class
// and the class record) is generated from manifests/softcap.yaml.
#include <cmath>
#include <vector>

#include "app/ops/softcap.hpp"
#include "softcap_reference.hpp"

namespace app {

tileops::OpOutputs SoftcapFwdOp::forward(const tileops::CallArgs& args) {
  const tileops::Tensor x = args.inputs[0].contiguous();
  ops::SoftcapFwdOp::Softcap::Call call;
  call.device = x.device();
  call.cap = cap();
  call.dtype = x.dtype();
  return {kernel_for<ops::SoftcapFwdOp::Softcap>(call).forward(x)};
}

tileops::Tensor ref::SoftcapFwdOp::Softcap::forward(const tileops::Tensor& x) {
  std::vector<double> values = x.to_doubles();
  for (double& v : values) v = call_.cap * std::tanh(v / call_.cap);
  return tileops::Tensor::from_doubles(values, x.shape(), x.dtype());
}

}  // namespace app
