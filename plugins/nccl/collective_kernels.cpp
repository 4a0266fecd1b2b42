#include "collective_kernels.hpp"

#include "tileops/errors.hpp"
#include "tileops/stream.hpp"

namespace tileops::nccl {
namespace {

struct Registered {
  std::shared_ptr<Provider> cuda;
  std::shared_ptr<Provider> hip;
};

Registered& registered() {
  static Registered r;
  return r;
}

Provider* provider_for(DeviceType type) {
  if (registered().cuda && registered().cuda->device_type() == type) return registered().cuda.get();
  if (registered().hip && registered().hip->device_type() == type) return registered().hip.get();
  return nullptr;
}

template <class ReduceOp>
Reduction reduction_of(ReduceOp reduce) {
  return reduce == ReduceOp::max ? Reduction::max : Reduction::sum;
}

std::size_t count_of(const Tensor& t) { return static_cast<std::size_t>(t.numel()); }

}  // namespace

void set_providers(std::shared_ptr<Provider> cuda, std::shared_ptr<Provider> hip) {
  registered() = {std::move(cuda), std::move(hip)};
}

std::optional<std::string> NcclDeclarations::refusal_for(DeviceType type) {
  Provider* provider = provider_for(type);
  if (provider == nullptr) return "no NCCL-compatible library serves " + std::string(type.name());
  return provider->unavailable();
}

Bound bind(std::int64_t communicator, const Device& device, std::string_view op) {
  Provider* provider = provider_for(device.type());
  if (provider == nullptr) throw OpNotAvailableError(std::string(op) + ": nccl serves no " + device.str());
  Bound bound;
  bound.comm = communicator_for_call(communicator, device, op);
  if (!bound.comm) {
    bound.backend = &provider->self(device.index());
    return bound;
  }
  if (bound.comm->provider() != provider->name()) {
    throw ValueError(std::string(op) + ": communicator " + bound.comm->key() + " was made by provider '" +
                     bound.comm->provider() + "', not '" + provider->name() + "', which serves " + device.str());
  }
  bound.backend = &bound.comm->backend();
  return bound;
}

template <>
void AllReduceKernel::forward(const Tensor& x, const Tensor& y) {
  bound_.backend->all_reduce(x.data_ptr(), y.data_ptr(), count_of(x), x.dtype(), reduction_of(call_.reduce),
                             current_stream(x.device()));
}

template <>
void AllGatherKernel::forward(const Tensor& x, const Tensor& y) {
  bound_.backend->all_gather(x.data_ptr(), y.data_ptr(), count_of(x), x.dtype(), current_stream(x.device()));
}

template <>
void ReduceScatterKernel::forward(const Tensor& x, const Tensor& y) {
  bound_.backend->reduce_scatter(x.data_ptr(), y.data_ptr(), count_of(y), x.dtype(), reduction_of(call_.reduce),
                                 current_stream(x.device()));
}

}  // namespace tileops::nccl
