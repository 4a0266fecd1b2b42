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

class AllReduceKernel final : public ops::AllReduceFwdOp::AllReduce::Impl<NcclDeclarations> {
 public:
  explicit AllReduceKernel(const Call& call);
  void forward(const Tensor& x, const Tensor& y) override;

 private:
  Bound bound_;
};

class AllGatherKernel final : public ops::AllGatherFwdOp::AllGather::Impl<NcclDeclarations> {
 public:
  explicit AllGatherKernel(const Call& call);
  void forward(const Tensor& x, const Tensor& y) override;

 private:
  Bound bound_;
};

class ReduceScatterKernel final : public ops::ReduceScatterFwdOp::ReduceScatter::Impl<NcclDeclarations> {
 public:
  explicit ReduceScatterKernel(const Call& call);
  void forward(const Tensor& x, const Tensor& y) override;

 private:
  Bound bound_;
};

}  // namespace tileops::nccl
