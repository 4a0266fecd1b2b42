#include "tileops/ops/batch_norm.hpp"

#include "tileops/extend/ops/norm.hpp"

namespace tileops {

OpOutputs BatchNormFwdOp::forward(const CallArgs& args) {
  const Tensor x = args.inputs[0].contiguous();
  auto contiguous_or_absent = [](const Tensor& t) { return t.defined() ? t.contiguous() : t; };
  const Tensor weight = contiguous_or_absent(args.inputs[3]);
  const Tensor bias = contiguous_or_absent(args.inputs[4]);
  // Training and inference take the same facts of the call.
  auto call_of = [&]<class Call>(Call call) {
    call.device = x.device();
    call.channels = x.shape()[1];
    call.eps = eps();
    call.momentum = momentum();
    call.dtype = x.dtype();
    return call;
  };
  if (training()) {
    using Train = ops::BatchNormFwdOp::BatchNormFwdTrain;
    // The running statistics are written in place: the kernel gets the caller's tensors
    // (the manifest declares them contiguous).
    auto& kernel = kernel_for<Train>(call_of(Train::Call{}));
    Train::Result r = kernel.forward(x, args.inputs[1], args.inputs[2], weight, bias);
    return outputs_of(std::move(r.y), std::move(r.mean), std::move(r.rstd));
  }
  using Infer = ops::BatchNormFwdOp::BatchNormFwdInfer;
  auto& kernel = kernel_for<Infer>(call_of(Infer::Call{}));
  return outputs_of(kernel.forward(x, args.inputs[1].contiguous(), args.inputs[2].contiguous(), weight, bias), Tensor(), Tensor());
}

}  // namespace tileops
