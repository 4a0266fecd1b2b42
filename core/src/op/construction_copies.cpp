// Op::Impl::params_on and Op::call_params: construction-time tensors follow the call device.
#include <algorithm>
#include <mutex>

#include "op/device_capture.hpp"
#include "op/op_impl.hpp"
#include "tileops/errors.hpp"

namespace tileops {

const ParamMap& Op::Impl::params_on(const std::optional<Device>& device) {
  const ParamMap& own = construction->params;
  if (copies == nullptr || !device || device->is_meta()) return own;
  const std::vector<std::size_t>& moved = plan.call_device_params();
  const auto on_device = [&](const ParamMap& params) {
    return std::all_of(moved.begin(), moved.end(), [&](std::size_t k) {
      const Value& v = params.items()[k].second;
      return !std::holds_alternative<Tensor>(v) || std::get<Tensor>(v).device() == *device;
    });
  };
  if (on_device(own)) return own;
  {
    std::shared_lock lock(copies->mutex);
    for (const auto& [d, params] : copies->by_device) {
      if (d == *device) return params;
    }
  }
  if (device_capture_active()) {
    refuse_in_capture(cls.name() + " (" + instance_key + ")",
                      "copying the construction-time tensors to " + device->str());
  }
  ParamMap copy = own;
  for (std::size_t k : moved) {
    const auto& [name, v] = own.items()[k];
    if (std::holds_alternative<Tensor>(v)) copy.set(name, std::get<Tensor>(v).to(*device));
  }
  std::unique_lock lock(copies->mutex);
  for (const auto& [d, params] : copies->by_device) {
    if (d == *device) return params;  // a concurrent call copied first
  }
  return copies->by_device.emplace_back(*device, std::move(copy)).second;
}

const ParamMap& Op::call_params() const {
  for (const CallFrame* f = CallFrame::top(); f != nullptr; f = f->parent) {
    if (f->op == this && f->params != nullptr) return *f->params;
  }
  return impl_->construction->params;
}

}  // namespace tileops
