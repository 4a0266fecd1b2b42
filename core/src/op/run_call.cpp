// The call entry and its seven steps.
#include "op/binding.hpp"
#include "op/op_state.hpp"
#include "op/call_frame.hpp"
#include "op/graph_capture.hpp"
#include "op/installed_kernels.hpp"
#include "op/target_selection.hpp"
#include "plugin/backend_call.hpp"
#include "signature/signature_plan.hpp"
#include "tileops/errors.hpp"
#include "tileops/op.hpp"

namespace tileops {
OpOutputs Op::call(const CallArgs& args) {
  if (GraphCapture* capture = GraphCapture::active()) return capture->record(*this, args);
  return run_call_impl(args, nullptr);
}

OpOutputs Op::run_call(const CallArgs& args) { return run_call_impl(args, nullptr); }

OpOutputs Op::fake_outputs(const CallArgs& meta_args) const {
  SignatureCall record;
  CallCheck check;
  plan_.check_call(*construction_, meta_args, check, record);
  return plan_.make_outputs(check, meta_args);
}

OpOutputs Op::run_call_impl(const CallArgs& args, int* effect_branch) {
  CallFrame frame(this);  // 1. open the call
  Binding* current = state_->binding.load(std::memory_order_acquire);
  CallCache::Stripe& stripe = current->calls.stripe();
  CallCache::Reader reader(stripe);
  const CachedCall* repeat = current->calls.find(args, stripe);
  if (repeat == nullptr) reader.release();
  std::shared_ptr<SignatureCall> record = current->calls.record(stripe, reader, repeat);
  CallCheck own_check;
  const CallCheck* check = &own_check;
  std::unique_ptr<CachedCall> recording;
  Selection selection(*this);
  OpOutputs outputs;
  try {
    if (repeat != nullptr) {  // 2. check the signature (or replay the check of a repeat)
      check = &repeat->check;
      plan_.check_writable(args, *check);
    } else {
      plan_.check_call(*construction_, args, own_check, *record);
    }
    if (effect_branch != nullptr) *effect_branch = check->effect_branch;
    const bool meta = check->device && check->device->is_meta();
    if (check->empty_write || (meta && cls_.has_boundary())) {
      outputs = plan_.make_outputs(*check, args);  // 3. empty write / the fake of a meta call
    } else if (meta) {
      frame.binding = current;
      frame.params = &construction_->params;
      outputs = forward(args);  // a composite on meta tensors: its sub-ops take the fake path
    } else {
      Binding& b = selection.select(check->device);  // 4. select the target
      frame.binding = &b;
      frame.params = &params_on(check->device);
      if (repeat != nullptr && &b == current) {
        frame.cached = repeat;
      } else if (repeat == nullptr && b.selected && !check->device_from_accelerator) {
        recording = std::make_unique<CachedCall>(args);
        frame.recording = recording.get();
      }
      outputs = b.builder ? run_target_kernel(b, *check, args, *frame.params) : forward(args);  // 5. execute
    }
    plan_.check_result(*check, args, outputs);  // 6. check the result
    file_stages(frame, *record);                // 7.1 sub-op calls under their stages, and what served the call
    if (!frame.target_served.empty()) record->kernels.push_back(frame.target_served);
    for (int k : frame.served) record->kernels.push_back(installed_->kernels[k].record_key);
  } catch (const Error&) {
    selection.undo();
    throw;
  } catch (const abi::__forced_unwind&) {
    throw;
  } catch (const std::exception&) {
    selection.undo();
    if (frame.kernel < 0) throw;
    throw_kernel_fault(frame.kernel);
  } catch (...) {
    // A value that is no std::exception passes untouched unless a kernel threw it: the core's
    // failure handling covers std::exception, and plugin code is held to it.
    if (frame.kernel < 0) throw;
    selection.undo();
    throw_kernel_fault(frame.kernel);
  }
  selection.commit();
  if (recording) {
    recording->keep(own_check, *record);
    frame.binding->calls.insert(std::move(recording));
  }
  reader.release();
  CallFrame* parent = frame.parent;
  frame.pop();                                                // 7.2
  SignatureCallPtr published = std::move(record);
  if (parent == nullptr) {
    state_->publish_last_call(std::move(published));  // 7.3
  } else {
    state_->publish_last_call(published);             // 7.3
    report_to(*parent, std::move(published));         // 7.4
  }
  return outputs;
}

void Op::file_stages(CallFrame& frame, SignatureCall& record) const {
  if (frame.unheld_child) {
    throw RuntimeError(cls_.name() + " (" + instance_key_ + "): sub-op " + *frame.unheld_child +
                       " completed a call during this call but is not held through delegate_for, so its call cannot "
                       "be filed under a stage");
  }
  if (frame.children.empty()) return;
  for (const std::string& name : plan_.composition_stages()) {
    StageRecord stage{name, {}};
    for (const auto& [child_stage, child_record] : frame.children) {
      if (child_stage == &name) stage.calls.push_back(child_record);
    }
    if (!stage.calls.empty()) record.stages.push_back(std::move(stage));
  }
}

void Op::report_to(CallFrame& parent, SignatureCallPtr record) const {
  if (const std::string* stage = parent.op->stage_of(this)) {
    parent.report(*stage, std::move(record));
  } else if (!parent.unheld_child) {
    parent.unheld_child = instance_key_;
  }
}

void Op::throw_kernel_fault(int kernel) const {
  const InstalledKernel& k = installed_->kernels[kernel];
  throw_backend_fault(cls_.name() + ": the kernel of kernel type '" + k.key + "' (" + k.origin() + ")");
}

}  // namespace tileops
