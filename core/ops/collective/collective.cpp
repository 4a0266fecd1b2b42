#include "tileops/ops/collective.hpp"

#include <string>

#include "tileops/communicator.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/ops/collective.hpp"

namespace tileops {
namespace {

// The id of the communicator `key` names (0 for self), checked against the op's world_size
// when it has one (world_size < 0: none).
std::int64_t communicator_id_of(const std::string& op, const std::string& key, std::int64_t world_size) {
  if (key == Communicator::kSelf) {
    if (world_size > 1) {
      throw ValueError(op + ": world_size is " + std::to_string(world_size) + ", but communicator '" + key +
                       "' is this rank alone (1 rank)");
    }
    return 0;
  }
  std::shared_ptr<Communicator> comm;
  try {
    comm = Communicator::find(key);
  } catch (const ValueError& e) {
    throw ValueError(op + ": parameter communicator: " + e.what());
  }
  if (world_size >= 0 && world_size != comm->size()) {
    throw ValueError(op + ": world_size is " + std::to_string(world_size) + ", but communicator " + key + " has " +
                     std::to_string(comm->size()) + " ranks");
  }
  return comm->id();
}

}  // namespace

void AllReduceFwdOp::derive() { derived_.communicator_id = communicator_id_of(name(), communicator(), -1); }

OpOutputs AllReduceFwdOp::forward(const CallArgs& args) {
  using AllReduce = ops::AllReduceFwdOp::AllReduce;
  const Tensor& input = args.inputs[0];
  AllReduce::Call call;
  call.device = input.device();
  call.communicator = communicator_id();
  call.reduce = reduce() == "max" ? AllReduce::ReduceOp::max : AllReduce::ReduceOp::sum;
  call.dtype = input.dtype();
  auto& kernel = kernel_for<AllReduce>(call);
  const Tensor x = input.contiguous();
  if (!inplace()) {
    Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
    kernel.forward(x, y);
    return outputs_of(std::move(y));
  }
  kernel.forward(x, x);
  if (!x.is_same(input)) input.copy_from(x);
  return outputs_of(input);
}

void AllGatherFwdOp::derive() { derived_.communicator_id = communicator_id_of(name(), communicator(), world_size()); }

OpOutputs AllGatherFwdOp::forward(const CallArgs& args) {
  using AllGather = ops::AllGatherFwdOp::AllGather;
  const Tensor x = args.inputs[0].contiguous();
  AllGather::Call call;
  call.device = x.device();
  call.communicator = communicator_id();
  call.dtype = x.dtype();
  Shape shape = x.shape();
  shape[0] *= world_size();
  Tensor y = Tensor::empty(shape, x.dtype(), x.device());
  kernel_for<AllGather>(call).forward(x, y);
  return outputs_of(std::move(y));
}

void ReduceScatterFwdOp::derive() {
  derived_.communicator_id = communicator_id_of(name(), communicator(), world_size());
}

OpOutputs ReduceScatterFwdOp::forward(const CallArgs& args) {
  using ReduceScatter = ops::ReduceScatterFwdOp::ReduceScatter;
  const Tensor x = args.inputs[0].contiguous();
  ReduceScatter::Call call;
  call.device = x.device();
  call.communicator = communicator_id();
  call.reduce = reduce() == "max" ? ReduceScatter::ReduceOp::max : ReduceScatter::ReduceOp::sum;
  call.dtype = x.dtype();
  Shape shape = x.shape();
  shape[0] /= world_size();
  Tensor y = Tensor::empty(shape, x.dtype(), x.device());
  kernel_for<ReduceScatter>(call).forward(x, y);
  return outputs_of(std::move(y));
}

}  // namespace tileops
