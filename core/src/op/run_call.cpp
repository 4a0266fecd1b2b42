// The call entry and its seven steps, target selection, and failure undo.
#include <algorithm>
#include <array>

#include "backend/registry.hpp"
#include "logging.hpp"
#include "nearest_names.hpp"
#include "op/binding.hpp"
#include "op/call_frame.hpp"
#include "op/device_capture.hpp"
#include "op/graph_capture.hpp"
#include "op/installed_kernels.hpp"
#include "plugin/backend_call.hpp"
#include "signature/expr/intern.hpp"
#include "signature/signature_plan.hpp"
#include "tileops/errors.hpp"
#include "tileops/op.hpp"

namespace tileops {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& item : items) s += (s.empty() ? "" : ", ") + item;
  return s.empty() ? "(none)" : s;
}

}  // namespace

// Step 4's state for one call: which binding the call runs under, and whether this call is
// the one selecting the target (holding the selection lock until it commits or undoes).
class Op::Selection {
 public:
  explicit Selection(Op& op) : op_(op) {}
  Selection(const Selection&) = delete;
  Selection& operator=(const Selection&) = delete;

  // Non-std exceptions are not handled: whatever step 4 chose stays, as after a normal call.
  ~Selection() { commit(); }

  Binding& select(const std::optional<Device>& device) {
    Binding* b = op_.binding_.load(std::memory_order_acquire);
    if (b->committed.load(std::memory_order_acquire)) return *b;
    if (op_.selecting_thread_.load() == std::this_thread::get_id()) return *b;  // re-entered during selection
    if (device_capture_active()) refuse_in_capture(op_.name() + " (" + op_.instance_key() + ")", "selecting the target");
    lock_ = std::unique_lock(op_.select_mutex_);
    b = op_.binding_.load(std::memory_order_acquire);
    if (b->committed.load(std::memory_order_acquire)) {
      lock_.unlock();
      return *b;
    }
    op_.selecting_thread_.store(std::this_thread::get_id());
    binding_ = b;
    op_.select_target(*b, device);
    return *b;
  }

  void commit() {
    if (binding_ == nullptr) return;
    if (binding_->selected) binding_->committed.store(true, std::memory_order_release);
    release();
  }

  // The call failed: if it selected the target, forget the selection and everything built
  // under it, here and in every held sub-op.
  void undo() noexcept {
    if (binding_ == nullptr) return;
    const bool selected_here = binding_->selected;
    op_.clear_binding(*binding_);
    release();
    if (selected_here) {
      for (Op* sub : op_.held_delegates()) sub->reset_binding();
    }
  }

 private:
  void release() {
    binding_ = nullptr;
    op_.selecting_thread_.store(std::thread::id());
    if (lock_.owns_lock()) lock_.unlock();
  }

  Op& op_;
  Binding* binding_ = nullptr;
  std::unique_lock<std::mutex> lock_;
};

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

namespace {

// Records this thread made, refilled once nothing else holds them (no op's last_call, no
// parent's stage, no caller), so that the steady state allocates no record and a thread writes
// only records its own cache already holds: refilling records other threads wrote would move
// every line of them between cores on each call of an op that threads share.
struct RecordPool {
  std::array<std::shared_ptr<SignatureCall>, 4> records;
  std::size_t next = 0;  // the entry a new record replaces when all are held elsewhere
};
thread_local RecordPool t_records;

std::shared_ptr<SignatureCall> fresh_record() {
  RecordPool& pool = t_records;
#if !defined(__SANITIZE_THREAD__)  // ThreadSanitizer does not model the fence below
  for (auto& record : pool.records) {
    if (record && record.use_count() == 1) {
      // Pairs with the release of the last other owner's reference: its reads happen before ours.
      std::atomic_thread_fence(std::memory_order_acquire);
      *record = SignatureCall();
      return record;
    }
  }
#endif
  auto record = std::make_shared<SignatureCall>();
  pool.records[pool.next] = record;
  pool.next = (pool.next + 1) % pool.records.size();
  return record;
}

}  // namespace

OpOutputs Op::run_call_impl(const CallArgs& args, int* effect_branch) {
  CallFrame frame(this);  // 1. open the call
  std::shared_ptr<SignatureCall> record = fresh_record();
  CallCheck check;
  Selection selection(*this);
  OpOutputs outputs;
  try {
    plan_.check_call(*construction_, args, check, *record);  // 2. check the signature
    if (effect_branch != nullptr) *effect_branch = check.effect_branch;
    const bool meta = check.device && check.device->is_meta();
    if (check.empty_write || (meta && cls_.has_boundary())) {
      outputs = plan_.make_outputs(check, args);  // 3. empty write / the fake of a meta call
    } else if (meta) {
      frame.binding = binding_.load(std::memory_order_acquire);
      frame.params = &construction_->params;
      outputs = forward(args);  // a composite on meta tensors: its sub-ops take the fake path
    } else {
      Binding& b = selection.select(check.device);  // 4. select the target
      frame.binding = &b;
      frame.params = &params_on(check.device);
      outputs = b.builder ? run_target_kernel(b, check, args, *frame.params) : forward(args);  // 5. execute
    }
    plan_.check_result(check, args, outputs);  // 6. check the result
    file_stages(frame, *record);               // 7.1 sub-op calls under their stages, and what served the call
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
    // failure handling covers std::exception (the seed's Exception), and plugin code is held to it.
    if (frame.kernel < 0) throw;
    selection.undo();
    throw_kernel_fault(frame.kernel);
  }
  selection.commit();
  CallFrame* parent = frame.parent;
  frame.pop();                                                // 7.2
  SignatureCallPtr published = record;
  last_call_.publish(published);  // 7.3
  if (parent != nullptr) report_to(*parent, std::move(published));  // 7.4
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

void Op::select_target(Binding& b, const std::optional<Device>& device) {
  const TargetChoice named = target_ ? TargetChoice{target_, "given to the op's constructor"} : default_target_choice();
  const bool by_default = !target_ && named.target;
  // How the messages below say where the name came from.
  const std::string from = by_default ? "the process default target, from " + named.source : named.source;
  std::string chosen;
  if (named.target) {
    chosen = *named.target;
    if (!is_in_tree_target(chosen) && !backend::target_known(chosen)) {
      std::vector<std::string> choices{std::string(BUILTIN), std::string(REFERENCE)};
      for (std::string& t : registered_targets()) choices.push_back(std::move(t));
      throw UnknownTargetError(cls_.name() + ": target '" + chosen + "' (" + from + ") is not registered" +
                               did_you_mean(chosen, choices) + "; the choices are " + join(choices) +
                               " (a plugin registers its targets when it loads: see 'tileops plugins')");
    }
  } else if (!device) {
    return;  // nothing to detect with: this call runs unselected, the next one selects again
  } else {
    std::vector<std::string> claims;
    for (const auto& [target, detect, owner] : backend::detectors()) {
      const bool claimed = call_backend([&] { return (*detect)(*device); }, [&] {
        return cls_.name() + ": the detector of target '" + target + "' (" + owner_phrase(owner) + "), asked about " +
               device->str() + ",";
      });
      if (claimed) claims.push_back(target);
    }
    if (claims.size() > 1) {
      throw AmbiguousTargetError(cls_.name() + ": targets " + join(claims) + " all claim device " + device->str() +
                                 "; pass a target to the op or set a default target");
    }
    chosen = claims.empty() ? std::string(BUILTIN) : claims.front();
  }
  // An op with neither kernel interfaces nor a composition is written for external backends
  // only: nothing in the tree can run it.
  const bool composite = cls_.interfaces().empty() && plan_.has_composition();
  const bool backend_only = cls_.interfaces().empty() && !plan_.has_composition();
  if (backend_only && is_in_tree_target(chosen)) {
    const std::string which = named.target ? "target '" + chosen + "' (" + from + ") runs only in-tree implementations"
                                           : "no target claims device " + device->str();
    const std::vector<std::string> known = registered_targets(cls_.name());
    throw OpNotAvailableError(cls_.name() + ": " + which + ", and " + cls_.name() +
                              " has none (it declares no kernel interfaces and no composition: it is written for "
                              "external backends); known targets for this op: [" +
                              (known.empty() ? std::string() : join(known)) + "]");
  }
  backend::OwnedBuilder builder;
  if (!is_in_tree_target(chosen)) {
    builder = backend::find_builder(cls_.name(), chosen);
    if (!builder.builder && !composite) {
      const std::string why =
          by_default ? "; the process default applies to every op constructed without a target, and a selected "
                       "target never falls back to the in-tree kernels: construct this op with target 'builtin' "
                       "(or 'reference'), or clear the default to let each device's detector choose"
          : named.target ? "; a selected target never falls back to the in-tree kernels: construct this op with "
                           "target 'builtin' (or 'reference') to run them"
                         : "; the target's detector claimed device " + device->str() +
                               ", and a selected target never falls back to the in-tree kernels";
      const std::vector<std::string> builders = registered_targets(cls_.name());
      throw OpNotAvailableError(cls_.name() + ": target '" + chosen + "'" +
                                (named.target ? " (" + from + ")" : std::string()) + " has no kernel builder for " +
                                cls_.name() + " (it builds: " + join(target_ops(chosen)) + "; " +
                                (builders.empty() ? "no registered target builds " + cls_.name()
                                                  : "the targets that build " + cls_.name() + ": " + join(builders)) +
                                ")" + why);
    }
  }
  b.serving_target = chosen;
  b.target_record_name = expr::intern(chosen);
  b.builder = std::move(builder.builder);
  b.builder_owner = std::move(builder.owner);
  b.selected = true;
  log().debug("{} ({}): target '{}' selected{}", cls_.name(), instance_key_, chosen,
              device ? " for " + device->str() : std::string());
}

OpOutputs Op::run_target_kernel(Binding& b, const CallCheck& check, const CallArgs& args, const ParamMap& params) {
  TargetKey key{check.device, {}};
  for (const Tensor& t : args.inputs) {
    key.inputs.push_back(t.defined() ? TargetInputSlot{true, t.dtype(), t.shape()} : TargetInputSlot{});
  }
  const TargetKernel* kernel = nullptr;
  {
    std::shared_lock lock(b.target_mutex);
    auto it = b.target_kernels.find(key);
    if (it != b.target_kernels.end()) kernel = &it->second;
  }
  if (kernel == nullptr) {
    if (device_capture_active()) {
      refuse_in_capture(cls_.name() + " (" + instance_key_ + ")",
                        "building target '" + *b.serving_target + "' kernel for " + key.str());
    }
    std::vector<std::optional<TensorSpec>> specs;
    for (const Tensor& t : args.inputs) {
      specs.push_back(t.defined() ? std::optional<TensorSpec>(TensorSpec::of(t)) : std::nullopt);
    }
    TargetKernel built = call_backend([&] { return (*b.builder)(specs, params); },
                                      [&] { return target_fault_where(b, "the kernel builder"); });
    if (!built) {
      throw BackendError(cls_.name() + ": target '" + *b.serving_target + "' (" + owner_phrase(b.builder_owner) +
                         ") returned an empty kernel for " + key.str());
    }
    if (tune_requested()) warn_target_cannot_tune();
    std::unique_lock lock(b.target_mutex);
    kernel = &b.target_kernels.try_emplace(std::move(key), std::move(built)).first->second;
  }
  // The target may assume every unwritten input is contiguous.
  boost::container::small_vector<Tensor, 6> inputs(args.inputs.begin(), args.inputs.end());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].defined() && !check.written[i] && !inputs[i].is_contiguous()) inputs[i] = inputs[i].contiguous();
  }
  CallFrame::top()->target_served = b.target_record_name;
  return call_backend([&] { return (*kernel)(CallArgs{inputs, args.out}); },
                      [&] { return target_fault_where(b, "the kernel"); });
}

std::string Op::target_fault_where(const Binding& b, const char* what) const {
  return cls_.name() + ": " + what + " of target '" + b.serving_target.value_or("?") + "' (" +
         owner_phrase(b.builder_owner) + ")";
}

void Op::clear_binding(Binding& b) {
  b.epoch.store(next_binding_epoch(), std::memory_order_release);
  b.selected = false;
  b.serving_target.reset();
  b.target_record_name = {};
  b.builder.reset();
  b.builder_owner.clear();
  {
    std::unique_lock lock(b.entries_mutex);
    b.entries_by_call.clear();
    for (auto& per_interface : b.built_entries) per_interface.clear();
  }
  std::unique_lock lock(b.target_mutex);
  b.target_kernels.clear();
}

void Op::reset_binding() {
  {
    std::unique_lock lock(select_mutex_, std::defer_lock);
    if (selecting_thread_.load() != std::this_thread::get_id()) lock.lock();
    // A committed binding may still be read by a cached call on another thread: retire it
    // (kept until the op dies) and start from a fresh one.
    bindings_.push_back(std::make_unique<Binding>(cls_.interfaces().size()));
    binding_.store(bindings_.back().get(), std::memory_order_release);
  }
  for (Op* sub : held_delegates()) sub->reset_binding();
}

}  // namespace tileops
