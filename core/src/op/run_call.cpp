// The call entry and its seven steps.
#include "op/op_impl.hpp"
#include "op/target_selection.hpp"
#include "plugin/backend_call.hpp"
#include "tileops/errors.hpp"

namespace tileops {
OpOutputs Op::call(const CallArgs& args) {
  ThreadCalls& thread = ThreadCalls::current();
  if (GraphCapture* capture = thread.graph_capture) {
    return capture->record(*this, args, [this](const CallArgs& meta) { return impl_->capture_call(meta); });
  }
  return impl_->run_call(args, nullptr, thread);
}

OpOutputs Op::run_call(const CallArgs& args) { return impl_->run_call(args, nullptr, ThreadCalls::current()); }

GraphCapture::MetaCall Op::Impl::capture_call(const CallArgs& meta_args) {
  if (cls.has_boundary()) {
    int branch = 0;
    OpOutputs outputs = run_call(meta_args, &branch, ThreadCalls::current());  // the fake: check, record, meta outputs
    return {std::move(outputs), cls.compile_op_names().at(branch)};
  }
  const Binding* b = binding.load(std::memory_order_acquire);
  if (!(b->committed.load(std::memory_order_acquire) && b->builder)) return {self.forward(meta_args), std::nullopt};
  return {fake_outputs(meta_args), "target:" + *b->serving_target};
}

OpOutputs Op::Impl::fake_outputs(const CallArgs& meta_args) const {
  SignatureCall record;
  CallCheck check;
  plan.check_call(*construction, meta_args, check, record);
  return plan.make_outputs(check, meta_args);
}

OpOutputs Op::Impl::run_call(const CallArgs& args, int* effect_branch, ThreadCalls& thread) {
  CallFrame frame(&self, thread);  // 1. open the call
  Binding* current = binding.load(std::memory_order_acquire);
  CallCache::Stripe& stripe = current->calls.stripe();
  CallCache::Reader reader(current->calls, stripe);
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
      plan.check_writable(args, *check);
    } else {
      plan.check_call(*construction, args, own_check, *record);
    }
    if (effect_branch != nullptr) *effect_branch = check->effect_branch;
    const bool meta = check->device && check->device->is_meta();
    if (check->empty_write || (meta && cls.has_boundary())) {
      outputs = plan.make_outputs(*check, args);  // 3. empty write / the fake of a meta call
    } else if (meta) {
      frame.binding = current;
      frame.params = &construction->params;
      outputs = self.forward(args);  // a composite on meta tensors: its sub-ops take the fake path
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
      outputs = b.builder ? run_target_kernel(frame, b, *check, args, *frame.params) : self.forward(args);  // 5. execute
    }
    plan.check_result(*check, args, outputs);  // 6. check the result
    file_stages(frame, *record);               // 7.1 sub-op calls under their stages, and what served the call
    if (!frame.target_served.empty()) record->kernels.push_back(frame.target_served);
    for (int k : frame.served) record->kernels.push_back(installed->kernels[k].record_key);
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
  frame.pop();  // 7.2
  SignatureCallPtr published = std::move(record);
  if (parent == nullptr) {
    publish_last_call(std::move(published), thread);  // 7.3
  } else {
    publish_last_call(published, thread);              // 7.3
    report_to(*parent, std::move(published));  // 7.4
  }
  return outputs;
}

void Op::Impl::file_stages(CallFrame& frame, SignatureCall& record) const {
  if (frame.unheld_child) {
    throw RuntimeError(cls.name() + " (" + instance_key + "): sub-op " + *frame.unheld_child +
                       " completed a call during this call but is not held through delegate_for, so its call cannot "
                       "be filed under a stage");
  }
  if (frame.children.empty()) return;
  for (const std::string& name : plan.composition_stages()) {
    StageRecord stage{name, {}};
    for (const auto& [child_stage, child_record] : frame.children) {
      if (child_stage == &name) stage.calls.push_back(child_record);
    }
    if (!stage.calls.empty()) record.stages.push_back(std::move(stage));
  }
}

void Op::Impl::report_to(CallFrame& parent, SignatureCallPtr record) const {
  if (const std::string* stage = parent.op->impl_->stage_of(&self)) {
    parent.report(*stage, std::move(record));
  } else if (!parent.unheld_child) {
    parent.unheld_child = instance_key;
  }
}

void Op::Impl::throw_kernel_fault(int kernel) const {
  const InstalledKernel& k = installed->kernels[kernel];
  throw_backend_fault(cls.name() + ": the kernel of kernel type '" + k.key + "' (" + k.origin() + ")");
}

}  // namespace tileops
