// EmbeddingFwdOp on the GPU.
#include "call_support.hpp"
#include "embedding_launcher.hpp"
#include "kernel_types.hpp"

namespace tileops::gpu {

EmbeddingKernel::EmbeddingKernel(const Call& call)
    : Impl(call), faults_(faults_of(call)) {}

Tensor EmbeddingKernel::forward(const Tensor& ids, const Tensor& weight) {
  runtime()->raise_pending_fault(weight.device().index());
  DeviceGuard on(weight.device().index());
  Shape shape = ids.shape();
  const std::int64_t hidden = weight.shape()[1];
  shape.push_back(hidden);
  Tensor y = Tensor::empty(shape, weight.dtype(), weight.device());
  launch_embedding({ids.data_ptr(), ids.dtype(), weight.data_ptr(), y.data_ptr(), ids.numel(), weight.shape()[0],
                    hidden * static_cast<std::int64_t>(dtype_size(weight.dtype())), faults_},
                   stream_of(weight));
  return y;
}

}  // namespace tileops::gpu
