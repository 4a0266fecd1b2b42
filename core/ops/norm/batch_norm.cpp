#include "tileops/ops/batch_norm.hpp"


#include "norm/reference_kernels.hpp"

namespace tileops {

const OpClass& BatchNormFwdOp::op_class() {
  static const OpClass cls = OpClass::define("BatchNormFwdOp")
                                 .interface<BatchNormTrainFwdInterface>("batch_norm_fwd_train")
                                 .interface<BatchNormInferFwdInterface>("batch_norm_fwd_infer")
                                 .kernel_type<ref::BatchNormTrainKernel>("batch_norm_train_reference")
                                 .kernel_type<ref::BatchNormInferKernel>("batch_norm_infer_reference")
                                 .build();
  return cls;
}

OpOutputs BatchNormFwdOp::forward(const CallArgs& args) {
  const Tensor x = args.inputs[0].contiguous();
  auto contiguous_or_absent = [](const Tensor& t) { return t.defined() ? t.contiguous() : t; };
  const Tensor weight = contiguous_or_absent(args.inputs[3]);
  const Tensor bias = contiguous_or_absent(args.inputs[4]);
  BatchNormCall call;
  call.device = x.device();
  call.channels = x.shape()[1];
  call.eps = eps();
  call.momentum = momentum();
  call.dtype = x.dtype();
  if (training()) {
    // The running statistics are written in place: the kernel gets the caller's tensors
    // (the manifest declares them contiguous).
    auto& kernel = kernel_for<BatchNormTrainFwdInterface>("batch_norm_fwd_train", call);
    BatchNormTrainResult r = kernel.forward(x, args.inputs[1], args.inputs[2], weight, bias);
    return {r.y, r.mean, r.rstd};
  }
  auto& kernel = kernel_for<BatchNormInferFwdInterface>("batch_norm_fwd_infer", call);
  return {kernel.forward(x, args.inputs[1].contiguous(), args.inputs[2].contiguous(), weight, bias), Tensor(), Tensor()};
}

}  // namespace tileops
