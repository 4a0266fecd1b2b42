// The collectives on the CPU: over a local group's ranks, or a copy for "self".
#include "collective_reference.hpp"

#include "tileops/extend/collectives.hpp"

namespace tileops::ref {
namespace {

template <class ReduceOp>
Reduction reduction_of(ReduceOp reduce) {
  return reduce == ReduceOp::max ? Reduction::max : Reduction::sum;
}

std::size_t count_of(const Tensor& t) { return static_cast<std::size_t>(t.numel()); }

}  // namespace

void AllReduceFwdOp::AllReduce::forward(const Tensor& x, const Tensor& y) {
  const auto comm = communicator_for_call(call_.communicator, x.device(), "AllReduceFwdOp");
  if (!comm) {
    if (!x.is_same(y)) y.copy_from(x);
    return;
  }
  comm->backend().all_reduce(x.data_ptr(), y.data_ptr(), count_of(x), x.dtype(), reduction_of(call_.reduce), nullptr);
}

void AllGatherFwdOp::AllGather::forward(const Tensor& x, const Tensor& y) {
  const auto comm = communicator_for_call(call_.communicator, x.device(), "AllGatherFwdOp");
  if (!comm) {
    y.copy_from(x);
    return;
  }
  comm->backend().all_gather(x.data_ptr(), y.data_ptr(), count_of(x), x.dtype(), nullptr);
}

void ReduceScatterFwdOp::ReduceScatter::forward(const Tensor& x, const Tensor& y) {
  const auto comm = communicator_for_call(call_.communicator, x.device(), "ReduceScatterFwdOp");
  if (!comm) {
    y.copy_from(x);
    return;
  }
  comm->backend().reduce_scatter(x.data_ptr(), y.data_ptr(), count_of(y), x.dtype(), reduction_of(call_.reduce),
                                 nullptr);
}

}  // namespace tileops::ref
