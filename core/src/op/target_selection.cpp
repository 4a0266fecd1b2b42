// Target selection (step 4) and its undo: which target serves an instance, chosen once by
// the first call that runs an implementation, and forgotten when that call fails.
#include "op/target_selection.hpp"

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
namespace {

// The detector running on this thread, while one runs. A detector that calls an op which must
// detect its own target would ask the detectors again, and so on without end.
struct RunningDetector {
  const std::string* target = nullptr;
  const std::string* owner = nullptr;
};
thread_local RunningDetector running_detector;

class DetectorScope {
 public:
  DetectorScope(const std::string& target, const std::string& owner) : saved_(running_detector) {
    running_detector = {&target, &owner};
  }
  ~DetectorScope() { running_detector = saved_; }
  DetectorScope(const DetectorScope&) = delete;
  DetectorScope& operator=(const DetectorScope&) = delete;

 private:
  RunningDetector saved_;
};

}  // namespace

Binding& Op::Impl::Selection::select(const std::optional<Device>& device) {
  Binding* b = op_.binding.load(std::memory_order_acquire);
  if (b->committed.load(std::memory_order_acquire)) return *b;
  if (op_.selecting_thread.load() == std::this_thread::get_id()) return *b;  // re-entered during selection
  if (device_capture_active()) refuse_in_capture(op_.cls.name() + " (" + op_.instance_key + ")", "selecting the target");
  lock_ = std::unique_lock(op_.select_mutex);
  b = op_.binding.load(std::memory_order_acquire);
  if (b->committed.load(std::memory_order_acquire)) {
    lock_.unlock();
    return *b;
  }
  op_.selecting_thread.store(std::this_thread::get_id());
  selecting_ = b;
  op_.select_target(*b, device);
  return *b;
}

void Op::Impl::Selection::commit() {
  if (selecting_ == nullptr) return;
  if (selecting_->selected) selecting_->committed.store(true, std::memory_order_release);
  release();
}

void Op::Impl::Selection::undo() noexcept {
  if (selecting_ == nullptr) return;
  const bool selected_here = selecting_->selected;
  selecting_->clear();
  release();
  if (selected_here) {
    for (Op* sub : op_.self.held_delegates()) sub->impl_->reset_binding();
  }
}

void Op::Impl::Selection::release() {
  selecting_ = nullptr;
  op_.selecting_thread.store(std::thread::id());
  if (lock_.owns_lock()) lock_.unlock();
}

void Op::Impl::select_target(Binding& b, const std::optional<Device>& device) {
  const TargetChoice named = target ? TargetChoice{target, "given to the op's constructor"} : default_target_choice();
  const bool by_default = !target && named.target;
  // How the messages below say where the name came from.
  const std::string from = by_default ? "the process default target, from " + named.source : named.source;
  std::string chosen;
  if (named.target) {
    chosen = *named.target;
    if (!is_in_tree_target(chosen) && !backend::target_known(chosen)) {
      std::vector<std::string> choices{std::string(BUILTIN), std::string(REFERENCE)};
      for (std::string& t : registered_targets()) choices.push_back(std::move(t));
      throw UnknownTargetError(cls.name() + ": target '" + chosen + "' (" + from + ") is not registered" +
                               did_you_mean(chosen, choices) + "; the choices are " + join(choices) +
                               " (a plugin registers its targets when it loads: see 'tileops plugins')");
    }
  } else if (!device) {
    return;  // nothing to detect with: this call runs unselected, the next one selects again
  } else {
    if (running_detector.target != nullptr) {
      throw BackendError(cls.name() + ": the detector of target '" + *running_detector.target + "' (" +
                         owner_phrase(*running_detector.owner) + ") called " + cls.name() +
                         " without a target, which would ask the detectors again without end; a detector must "
                         "decide from the device alone (or construct the ops it calls with a target)");
    }
    std::vector<std::string> claims;
    for (const auto& [target, detect, owner] : backend::detectors()) {
      const auto where = [&] {
        return cls.name() + ": the detector of target '" + target + "' (" + owner_phrase(owner) + "), asked about " +
               device->str() + ",";
      };
      const bool claimed = call_backend(
          [&] {
            const DetectorScope running(target, owner);
            try {
              return (*detect)(*device);
            } catch (const Error& e) {
              rethrow_with_where(e, where());
            }
          },
          where);
      if (claimed) claims.push_back(target);
    }
    if (claims.size() > 1) {
      throw AmbiguousTargetError(cls.name() + ": targets " + join(claims) + " all claim device " + device->str() +
                                 "; pass a target to the op or set a default target");
    }
    chosen = claims.empty() ? std::string(BUILTIN) : claims.front();
  }
  // An op with neither kernel interfaces nor a composition is written for external backends
  // only: nothing in the tree can run it.
  const bool composite = cls.interfaces().empty() && plan.has_composition();
  const bool backend_only = cls.interfaces().empty() && !plan.has_composition();
  if (backend_only && is_in_tree_target(chosen)) {
    const std::string which = named.target ? "target '" + chosen + "' (" + from + ") runs only in-tree implementations"
                                           : "no target claims device " + device->str();
    const std::vector<std::string> known = registered_targets(cls.name());
    throw OpNotAvailableError(cls.name() + ": " + which + ", and " + cls.name() +
                              " has none (it declares no kernel interfaces and no composition: it is written for "
                              "external backends); known targets for this op: [" +
                              join(known) + "]");
  }
  backend::OwnedBuilder builder;
  if (!is_in_tree_target(chosen)) {
    builder = backend::find_builder(cls.name(), chosen);
    if (!builder.builder && !composite) {
      const std::string why =
          by_default ? "; the process default applies to every op constructed without a target, and a selected "
                       "target never falls back to the in-tree kernels: construct this op with target 'builtin' "
                       "(or 'reference'), or clear the default to let each device's detector choose"
          : named.target ? "; a selected target never falls back to the in-tree kernels: construct this op with "
                           "target 'builtin' (or 'reference') to run them"
                         : "; the target's detector claimed device " + device->str() +
                               ", and a selected target never falls back to the in-tree kernels";
      const std::vector<std::string> builders = registered_targets(cls.name());
      throw OpNotAvailableError(cls.name() + ": target '" + chosen + "'" +
                                (named.target ? " (" + from + ")" : std::string()) + " has no kernel builder for " +
                                cls.name() + " (it builds: " + or_none(join(target_ops(chosen))) + "; " +
                                (builders.empty() ? "no registered target builds " + cls.name()
                                                  : "the targets that build " + cls.name() + ": " + join(builders)) +
                                ")" + why);
    }
  }
  b.serving_target = chosen;
  b.target_record_name = expr::intern(chosen);
  b.builder = std::move(builder.builder);
  b.builder_owner = std::move(builder.owner);
  b.selected = true;
  log().debug("{} ({}): target '{}' selected{}", cls.name(), instance_key, chosen,
              device ? " for " + device->str() : std::string());
}

void Op::Impl::reset_binding() {
  {
    std::unique_lock lock(select_mutex, std::defer_lock);
    if (selecting_thread.load() != std::this_thread::get_id()) lock.lock();
    // A committed binding may still be read by a cached call on another thread: retire it
    // (kept until the op dies) and start from a fresh one.
    bindings.push_back(std::make_unique<Binding>(capacity));
    binding.store(bindings.back().get(), std::memory_order_release);
  }
  for (Op* sub : self.held_delegates()) sub->impl_->reset_binding();
}

}  // namespace tileops
