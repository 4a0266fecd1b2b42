// The call device (call-time tensors, a `device` parameter, construction-time tensors, the
// accelerator's current device), device agreement, and the preconditions of `out`.
#include "signature/compiled_plan.hpp"
#include "tileops/extend/device_runtime.hpp"

namespace tileops::detail {

std::optional<Device> CompiledPlan::call_device(const CallArgs& args, const ConstructionState& st, const CheckState& f,
                                                bool& accelerator) const {
  accelerator = false;
  for (const Tensor& x : args.inputs) {
    if (x.defined() && x.device().is_meta()) return Device::meta();
  }
  if (args.out.defined() && args.out.device().is_meta()) return Device::meta();
  for (int i = 0; i < n_inputs_; ++i) {
    const Tensor& x = args.inputs[static_cast<std::size_t>(i)];
    if (x.defined() && !input(i).device_cpu) return x.device();
  }
  if (args.out.defined()) return args.out.device();
  if (device_param_ >= 0) {
    const Val& v = f.slots[static_cast<std::size_t>(params_[static_cast<std::size_t>(device_param_)].slot)];
    if (v.tag == Val::Tag::device) return *v.dev;
  }
  for (std::size_t k = 0; k < params_.size(); ++k) {
    const ParamInfo& p = params_[k];
    if (!p.is_tensor || tensors_[static_cast<std::size_t>(p.tensor)].device_cpu) continue;
    const Value& v = st.params.items()[k].second;
    if (std::holds_alternative<Tensor>(v)) return std::get<Tensor>(v).device();
  }
  if (st.meta_calls) return Device::meta();
  accelerator = true;
  return accelerator_current_device();
}

void CompiledPlan::check_devices(const CallArgs& args, const std::optional<Device>& device) const {
  const bool meta = device && device->is_meta();
  int first = -1;
  for (int i = 0; i < n_inputs_; ++i) {
    const Tensor& x = args.inputs[static_cast<std::size_t>(i)];
    if (!x.defined()) continue;
    const TensorDecl& t = input(i);
    const Device& d = x.device();
    if (t.device_cpu) {
      if (!d.is_cpu() && !(meta && d.is_meta())) {
        throw TypeError(message("input '" + t.name + "' must be on cpu (declared device: cpu), but is on " + d.str()));
      }
      continue;
    }
    if (meta) {
      if (!d.is_meta()) {
        throw TypeError(message("input '" + t.name + "' is on " + d.str() +
                                ", but the call runs on meta: a call passes either meta tensors or real ones"));
      }
      continue;
    }
    if (first < 0) {
      first = i;
      continue;
    }
    if (!(d == *device)) {
      throw TypeError(message("input '" + t.name + "' is on " + d.str() + ", but the call device is " + device->str() +
                              " (from input '" + input(first).name + "')"));
    }
  }
}

void CompiledPlan::check_out(const Tensor& out, const CallCheck& check) const {
  const OutputPlan& o = check.outputs[static_cast<std::size_t>(out_output_)];
  const TensorDecl& t = tensors_[static_cast<std::size_t>(output_tensor(out_output_))];
  const std::string what = "'out' (the buffer of output '" + t.name + "')";
  if (!o.present) throw ValueError(message(what + " was passed, but the output is None on this call"));
  if (check.device && !(out.device() == *check.device)) {
    throw ValueError(message(what + " is on " + out.device().str() + ", but the call device is " + check.device->str()));
  }
  if (out.dtype() != o.dtype) {
    throw ValueError(message(what + " dtype " + std::string(dtype_name(out.dtype())) + " does not match " + t.dtype.text +
                             " = " + std::string(dtype_name(o.dtype))));
  }
  if (!(ShapeView(out.shape()).size() == o.shape.size() && std::equal(o.shape.begin(), o.shape.end(), out.shape().begin()))) {
    throw ValueError(message(what + " shape " + shape_str(out.shape()) + " does not match " + t.shape.text + " = " +
                             shape_str(o.shape)));
  }
  if (t.contiguous && !out.is_contiguous()) {
    throw ValueError(message(what + " must be contiguous (declared contiguous: true), but has strides " +
                             shape_str(out.strides())));
  }
}

}  // namespace tileops::detail
