// The state of an op instance, in one place: what construction settled (class, parameters,
// implementation table, key), the binding group (the current binding, every binding the
// instance used, the selection lock) and the running group (tune mode, last_call, held
// sub-ops), with the steps of a call that work on them.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "op/binding.hpp"
#include "op/call_frame.hpp"
#include "op/construction_copies.hpp"
#include "op/graph_capture.hpp"
#include "op/installed_kernels.hpp"
#include "op/record_slot.hpp"
#include "signature/signature_plan.hpp"
#include "thread_stripe.hpp"
#include "tileops/op.hpp"

namespace tileops {

// Hidden explicitly: a nested class takes the visibility of Op, which the core exports.
struct __attribute__((visibility("hidden"))) Op::Impl {
  Impl(Op& op, const OpClass& op_class, Target target_given);

  Op& self;
  const OpClass& cls;
  const SignaturePlan& plan;
  const Target target;
  std::unique_ptr<const ConstructionState> construction;
  std::unique_ptr<const InstalledKernels> installed;
  std::unique_ptr<ConstructionCopies> copies;  // only when the class has call-device construction tensors
  std::string instance_key;

  // Binding group: the current binding, and every binding this instance ever used (a reset
  // of a committed binding must not free what a concurrent cached call still reads).
  std::atomic<Binding*> binding{nullptr};
  std::vector<std::unique_ptr<Binding>> bindings;
  CacheCapacity capacity;  // under select_mutex
  mutable std::mutex select_mutex;
  std::atomic<std::thread::id> selecting_thread{};

  // Running group.
  std::atomic<bool> tune_requested{false};
  std::atomic<bool> tune_warned{false};
  std::atomic<bool> target_eviction_warned{false};
  // last_call: one slot per thread stripe, and the stripe of the latest publication, so that
  // threads sharing an instance publish into slots of their own (and release only records
  // they made) instead of handing each other's records and one slot's line back and forth.
  Striped<RecordSlot<SignatureCall>> last_calls;
  std::atomic<int> last_stripe{-1};
  struct HeldDelegate {
    std::string stage;
    Identity identity;
    std::shared_ptr<Op> op;
    bool injected = false;
  };
  mutable std::shared_mutex delegates_mutex;
  std::vector<HeldDelegate> delegates;

  // The seven steps (run_call.cpp) on the calling thread's `thread`; `effect_branch`, when
  // given, receives the call's branch.
  OpOutputs run_call(const CallArgs& args, int* effect_branch, ThreadCalls& thread);
  // A call while a Graph is captured on this thread, on the meta twins of its tensors.
  GraphCapture::MetaCall capture_call(const CallArgs& meta_args);
  // The fake of a call on meta tensors: the signature check and the outputs it infers.
  OpOutputs fake_outputs(const CallArgs& meta_args) const;
  // Step 7: files the sub-op calls of `frame` under their stages; reports a finished call to
  // the call that made it.
  void file_stages(CallFrame& frame, SignatureCall& record) const;
  void report_to(CallFrame& parent, SignatureCallPtr record) const;
  // Inside a catch handler: throws the handled exception as a BackendError naming the installed
  // kernel type `kernel` (the one kernel_for last handed out in the failed call).
  [[noreturn]] void throw_kernel_fault(int kernel) const;

  // Step 4 (target_selection.cpp): what a first call selects; a fresh binding, here and in the
  // held sub-ops.
  class Selection;
  void select_target(Binding& b, const std::optional<Device>& device);
  void reset_binding();

  // Step 5 when a target serves the op (target_kernels.cpp).
  OpOutputs run_target_kernel(CallFrame& frame, Binding& b, const CallCheck& check, const CallArgs& args,
                              const ParamMap& params);
  std::string target_fault_where(const Binding& b, const char* what) const;
  void warn_target_cannot_tune();
  // Warns, once per instance, that its target-kernel cache evicted a kernel.
  void warn_target_kernel_evicted(const Binding& b);

  // The construction parameters with every construction-time tensor that does not declare
  // `device: cpu` on `device`: construction's own when they are there already (or the call
  // is on meta), else this instance's copy for `device`, made on first use. Throws what the
  // copy throws; a first copy inside a device graph capture is refused.
  const ParamMap& params_on(const std::optional<Device>& device);

  // "<op>: the kernel of kernel type '<key>' (<origin>)" for a kernel this instance built.
  std::string describe_kernel(const Kernel* kernel) const;
  // The stage `sub` is held under, as the plan's name of it, or nullptr when it is not held.
  const std::string* stage_of(const Op* sub) const;

  void publish_last_call(SignatureCallPtr record, ThreadCalls& thread) {
    const std::size_t stripe = last_calls.index();
    last_calls[stripe].publish(std::move(record), thread.spare_record());
    if (last_stripe.load(std::memory_order_relaxed) != static_cast<int>(stripe)) {
      last_stripe.store(static_cast<int>(stripe), std::memory_order_release);
    }
  }
  SignatureCallPtr last_call() const {
    const int stripe = last_stripe.load(std::memory_order_acquire);
    return stripe < 0 ? nullptr : last_calls[static_cast<std::size_t>(stripe)].load();
  }
};

}  // namespace tileops
