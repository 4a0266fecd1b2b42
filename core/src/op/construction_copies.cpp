// Op::params_on and Op::call_params: construction-time tensors follow the call device.
#include <algorithm>
#include <mutex>

#include "op/call_frame.hpp"
#include "op/construction_copies.hpp"
#include "op/device_capture.hpp"
#include "signature/signature_plan.hpp"
#include "tileops/errors.hpp"
#include "tileops/op.hpp"

namespace tileops {

const ParamMap& Op::params_on(const std::optional<Device>& device) {
  const ParamMap& own = construction_->params;
  if (copies_ == nullptr || !device || device->is_meta()) return own;
  const std::vector<std::size_t>& moved = plan_.call_device_params();
  const auto on_device = [&](const ParamMap& params) {
    return std::all_of(moved.begin(), moved.end(), [&](std::size_t k) {
      const Value& v = params.items()[k].second;
      return !std::holds_alternative<Tensor>(v) || std::get<Tensor>(v).device() == *device;
    });
  };
  if (on_device(own)) return own;
  {
    std::shared_lock lock(copies_->mutex);
    for (const auto& [d, params] : copies_->by_device) {
      if (d == *device) return params;
    }
  }
  if (device_capture_active()) {
    refuse_in_capture(cls_.name() + " (" + instance_key_ + ")",
                      "copying the construction-time tensors to " + device->str());
  }
  ParamMap copy = own;
  for (std::size_t k : moved) {
    const auto& [name, v] = own.items()[k];
    if (std::holds_alternative<Tensor>(v)) copy.set(name, std::get<Tensor>(v).to(*device));
  }
  std::unique_lock lock(copies_->mutex);
  for (const auto& [d, params] : copies_->by_device) {
    if (d == *device) return params;  // a concurrent call copied first
  }
  return copies_->by_device.emplace_back(*device, std::move(copy)).second;
}

const ParamMap& Op::call_params() const {
  for (const CallFrame* f = CallFrame::top(); f != nullptr; f = f->parent) {
    if (f->op == this && f->params != nullptr) return *f->params;
  }
  return construction_->params;
}

}  // namespace tileops
