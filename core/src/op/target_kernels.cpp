// Step 5 when a target serves the op: its builder's kernel for the call, built once per
// device and input dtypes and shapes and kept in the binding's target-kernel cache.
#include "backend/registry.hpp"
#include "logging.hpp"
#include "op/device_capture.hpp"
#include "op/op_impl.hpp"
#include "plugin/backend_call.hpp"
#include "tileops/errors.hpp"

namespace tileops {

OpOutputs Op::Impl::run_target_kernel(CallFrame& frame, Binding& b, const CallCheck& check, const CallArgs& args,
                                       const ParamMap& params) {
  std::shared_ptr<const TargetKernel> kernel = frame.cached != nullptr ? frame.cached->target_kernel : nullptr;
  if (!kernel) {
    TargetKey key{check.device, {}};
    for (const Tensor& t : args.inputs) {
      key.inputs.push_back(t.defined() ? TargetInputSlot{true, t.dtype(), t.shape()} : TargetInputSlot{});
    }
    kernel = b.target_kernels.find(key);
    if (!kernel) {
      if (device_capture_active()) {
        refuse_in_capture(cls.name() + " (" + instance_key + ")",
                          "building target '" + *b.serving_target + "' kernel for " + key.str());
      }
      std::vector<std::optional<TensorSpec>> specs;
      for (const Tensor& t : args.inputs) {
        specs.push_back(t.defined() ? std::optional<TensorSpec>(TensorSpec::of(t)) : std::nullopt);
      }
      TargetKernel built = call_backend([&] { return (*b.builder)(specs, params); },
                                        [&] { return target_fault_where(b, "the kernel builder"); });
      if (!built) {
        throw BackendError(cls.name() + ": target '" + *b.serving_target + "' (" + owner_phrase(b.builder_owner) +
                           ") returned an empty kernel for " + key.str());
      }
      if (tune_requested.load(std::memory_order_acquire)) warn_target_cannot_tune();
      const std::uint64_t evicted = b.target_kernels.counters().evictions;
      kernel = b.target_kernels.insert(std::move(key), std::make_shared<const TargetKernel>(std::move(built)));
      if (b.target_kernels.counters().evictions != evicted) warn_target_kernel_evicted(b);
    }
    if (frame.recording != nullptr) frame.recording->target_kernel = kernel;
  }
  // The target may assume every unwritten input is contiguous.
  boost::container::small_vector<Tensor, 6> inputs(args.inputs.begin(), args.inputs.end());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].defined() && !check.written[i] && !inputs[i].is_contiguous()) inputs[i] = inputs[i].contiguous();
  }
  frame.target_served = b.target_record_name;
  return call_backend([&] { return (*kernel)(CallArgs{inputs, args.out}); },
                      [&] { return target_fault_where(b, "the kernel"); });
}

std::string Op::Impl::target_fault_where(const Binding& b, const char* what) const {
  return cls.name() + ": " + what + " of target '" + b.serving_target.value_or("?") + "' (" +
         owner_phrase(b.builder_owner) + ")";
}

void Op::Impl::warn_target_kernel_evicted(const Binding& b) {
  if (target_eviction_warned.exchange(true)) return;
  log().warn("{} ({}): target '{}' has built more kernels than target_kernel_cache_capacity ({}) keeps; one was "
             "evicted, and its builder will run again if that specialization comes back (raise the capacity to "
             "build each specialization once)",
             cls.name(), instance_key, b.serving_target.value_or("?"), b.target_kernels.counters().capacity);
}

void Op::Impl::warn_target_cannot_tune() {
  if (tune_warned.exchange(true)) return;
  const Binding* b = binding.load(std::memory_order_acquire);
  log().warn("{} ({}): tuning was requested, but target '{}' serves this op and its kernels cannot be tuned",
             cls.name(), instance_key, b->serving_target.value_or("?"));
}

}  // namespace tileops
