// Target selection (step 4) and its undo: which target serves an instance, chosen once by
// the first call that runs an implementation, and forgotten when that call fails.
#include "op/target_selection.hpp"

#include "op/op_state.hpp"

#include "backend/registry.hpp"
#include "join.hpp"
#include "logging.hpp"
#include "nearest_names.hpp"
#include "op/device_capture.hpp"
#include "plugin/backend_call.hpp"
#include "signature/expr/intern.hpp"
#include "signature/signature_plan.hpp"
#include "tileops/errors.hpp"

namespace tileops {

Binding& Op::Selection::select(const std::optional<Device>& device) {
  Binding* b = op_.state_->binding.load(std::memory_order_acquire);
  if (b->committed.load(std::memory_order_acquire)) return *b;
  if (op_.state_->selecting_thread.load() == std::this_thread::get_id()) return *b;  // re-entered during selection
  if (device_capture_active()) refuse_in_capture(op_.name() + " (" + op_.instance_key() + ")", "selecting the target");
  lock_ = std::unique_lock(op_.state_->select_mutex);
  b = op_.state_->binding.load(std::memory_order_acquire);
  if (b->committed.load(std::memory_order_acquire)) {
    lock_.unlock();
    return *b;
  }
  op_.state_->selecting_thread.store(std::this_thread::get_id());
  selecting_ = b;
  op_.select_target(*b, device);
  return *b;
}

void Op::Selection::commit() {
  if (selecting_ == nullptr) return;
  if (selecting_->selected) selecting_->committed.store(true, std::memory_order_release);
  release();
}

void Op::Selection::undo() noexcept {
  if (selecting_ == nullptr) return;
  const bool selected_here = selecting_->selected;
  op_.clear_binding(*selecting_);
  release();
  if (selected_here) {
    for (Op* sub : op_.held_delegates()) sub->reset_binding();
  }
}

void Op::Selection::release() {
  selecting_ = nullptr;
  op_.state_->selecting_thread.store(std::thread::id());
  if (lock_.owns_lock()) lock_.unlock();
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
                              join(known) + "]");
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
                                cls_.name() + " (it builds: " + or_none(join(target_ops(chosen))) + "; " +
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

void Op::clear_binding(Binding& b) {
  b.selected = false;
  b.serving_target.reset();
  b.target_record_name = {};
  b.builder.reset();
  b.builder_owner.clear();
  b.calls.clear();
  {
    std::unique_lock lock(b.entries_mutex);
    b.entries_by_call.clear();
    for (auto& per_interface : b.built_entries) per_interface.clear();
  }
  b.target_kernels.clear();
}

void Op::reset_binding() {
  {
    std::unique_lock lock(state_->select_mutex, std::defer_lock);
    if (state_->selecting_thread.load() != std::this_thread::get_id()) lock.lock();
    // A committed binding may still be read by a cached call on another thread: retire it
    // (kept until the op dies) and start from a fresh one.
    state_->bindings.push_back(std::make_unique<Binding>(cls_.interfaces().size(), state_->capacity));
    state_->binding.store(state_->bindings.back().get(), std::memory_order_release);
  }
  for (Op* sub : held_delegates()) sub->reset_binding();
}

}  // namespace tileops
