// The collective ops' kernel types on cuda and hip: each call goes to the communicator's
// backend (an NCCL or RCCL communicator), queued on the call device's current stream. "self"
// is a communicator of one rank the provider makes per device on first use.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "nccl_provider.hpp"
#include "tileops/extend/kernel.hpp"
#include "tileops/extend/ops/collective.hpp"

namespace tileops::nccl {

// The providers this plugin registered, for the kernels to find by device type.
void set_providers(std::shared_ptr<Provider> cuda, std::shared_ptr<Provider> hip);

struct NcclDeclarations : Kernel {
  static constexpr DeviceTypes devices{"cuda", "hip"};
  // Refuses calls on a device type whose library did not load, with the loader's reason.
  template <class Call>
  static std::optional<std::string> refusal(const Call& call) {
    return refusal_for(call.device ? call.device->type() : DeviceType::cpu());
  }
  static std::optional<std::string> refusal_for(DeviceType type);
};

// What a built kernel holds: the communicator (null for self) and the backend it calls.
struct Bound {
  std::shared_ptr<Communicator> comm;
  CommunicatorBackend* backend = nullptr;
};

// Resolves a call spec's communicator for op `op` on `device` (see communicator_for_call),
// checking that this plugin's provider made it.
Bound bind(std::int64_t communicator, const Device& device, std::string_view op);

// The kernel type of one collective interface: binds the call spec's communicator when built,
// then queues each call on the call device's current stream.
template <class Interface>
class CollectiveKernel final : public Interface::template Impl<NcclDeclarations> {
 public:
  using Call = typename Interface::Call;
  explicit CollectiveKernel(const Call& call)
      : Interface::template Impl<NcclDeclarations>(call), bound_(bind(call.communicator, *call.device, Interface::op_name)) {}
  void forward(const Tensor& x, const Tensor& y) override;

 private:
  Bound bound_;
};

using AllReduceKernel = CollectiveKernel<ops::AllReduceFwdOp::AllReduce>;
using AllGatherKernel = CollectiveKernel<ops::AllGatherFwdOp::AllGather>;
using ReduceScatterKernel = CollectiveKernel<ops::ReduceScatterFwdOp::ReduceScatter>;
template <>
void AllReduceKernel::forward(const Tensor& x, const Tensor& y);
template <>
void AllGatherKernel::forward(const Tensor& x, const Tensor& y);
template <>
void ReduceScatterKernel::forward(const Tensor& x, const Tensor& y);

}  // namespace tileops::nccl
