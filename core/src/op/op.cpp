// Op construction, accessors, records, tuning, enumeration and sub-op holding.
#include "tileops/op.hpp"

#include <algorithm>
#include <unordered_set>

#include "join.hpp"
#include "logging.hpp"
#include "op/binding.hpp"
#include "op/call_frame.hpp"
#include "op/construction_copies.hpp"
#include "op/installed_kernels.hpp"
#include "op/op_state.hpp"
#include "op/instance_registry.hpp"
#include "plugin/backend_call.hpp"
#include "signature/signature_plan.hpp"
#include "tileops/config.hpp"
#include "tileops/errors.hpp"

namespace tileops {

Op::Op(const OpClass& cls, ParamMap params, Target target, std::initializer_list<std::string_view> injected)
    : cls_(cls), plan_(cls.plan()), target_(std::move(target)), state_(std::make_unique<State>()) {
  if (target_ && target_->empty()) throw ValueError(cls_.name() + ": the target name is empty");
  // 1. The registry must exist before any call: a first call may already be inside a graph
  //    capture, where loading plugins is not allowed.
  load_backends();
  for (std::string_view name : injected) check_injected_parameter(name);
  // 2. Parameters are checked once, at construction, and the solved indices kept.
  construction_ = std::make_unique<const ConstructionState>(plan_.check_construction(params));
  if (!plan_.call_device_params().empty()) copies_ = std::make_unique<ConstructionCopies>();
  // 3. The implementation table depends only on the class and the registry: resolve it now.
  installed_ = std::make_unique<const InstalledKernels>(InstalledKernels::install(cls_, target_ != REFERENCE));
  // 4. The key must exist before any graph records this instance.
  instance_key_ = register_instance(this);
  // 5. Binding and running state start empty.
  const Config cfg = config();
  state_->capacity = {cfg.call_cache_capacity, cfg.target_kernel_cache_capacity};
  state_->bindings.push_back(std::make_unique<Binding>(cls_.interfaces().size(), state_->capacity));
  state_->binding.store(state_->bindings.back().get(), std::memory_order_release);
}

Op::~Op() { unregister_instance(instance_key_); }

void Op::check_injected_parameter(std::string_view name) const {
  const auto& allowed = cls_.injected_parameters();
  if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
    throw TypeError(cls_.name() + ": '" + std::string(name) +
                    "' is neither a manifest parameter nor in the class's injected_parameters");
  }
}

std::optional<std::string> Op::serving_target() const {
  const Binding* b = state_->binding.load(std::memory_order_acquire);
  if (!b->committed.load(std::memory_order_acquire) && state_->selecting_thread.load() != std::this_thread::get_id()) {
    return std::nullopt;
  }
  return b->selected ? b->serving_target : std::nullopt;
}

const ParamMap& Op::params() const { return construction_->params; }

bool Op::tune_requested() const { return state_->tune_requested.load(std::memory_order_acquire); }

SignatureCallPtr Op::last_call() const {
  SignatureCallPtr record = state_->last_call();
  if (!record) throw RuntimeError(cls_.name() + " (" + instance_key_ + "): last_call is not available: no call has completed yet");
  return record;
}

Roofline Op::eval_roofline() const {
  const RooflineFigures f = plan_.eval_roofline(*last_call());
  return {f.flops, f.bytes};
}

std::string Op::describe_kernel(const Kernel* kernel) const {
  const Binding* b = state_->binding.load(std::memory_order_acquire);
  std::shared_lock lock(b->entries_mutex);
  for (const auto& per_interface : b->built_entries) {
    for (const auto& slot : per_interface) {
      if (slot->kernel.get() != kernel) continue;
      const InstalledKernel& k = installed_->kernels[slot->kernel_index];
      return cls_.name() + ": the kernel of kernel type '" + k.key + "' (" + k.origin() + ")";
    }
  }
  return cls_.name() + ": a kernel held inside another of its kernels";
}

void Op::request_tune() {
  state_->tune_requested.store(true, std::memory_order_release);
  for (Kernel* k : iter_kernels()) {
    call_backend([&] { k->request_tune(); }, [&] { return describe_kernel(k) + ", in request_tune,"; });
  }
  for (Op* sub : held_delegates()) sub->request_tune();
  const Binding* b = state_->binding.load(std::memory_order_acquire);
  if (b->committed.load(std::memory_order_acquire) && b->builder) warn_target_cannot_tune();
}

void Op::warn_target_cannot_tune() {
  if (state_->tune_warned.exchange(true)) return;
  const Binding* b = state_->binding.load(std::memory_order_acquire);
  log().warn("{} ({}): tuning was requested, but target '{}' serves this op and its kernels cannot be tuned",
             cls_.name(), instance_key_, b->serving_target.value_or("?"));
}

std::optional<std::string> Op::kernel_config() const {
  for (Kernel* k : iter_kernels()) {
    if (auto c = call_backend([&] { return k->config(); }, [&] { return describe_kernel(k) + ", in config,"; })) return c;
  }
  return std::nullopt;
}

std::vector<Kernel*> Op::iter_kernels() const {
  std::vector<Kernel*> out;
  std::unordered_set<Kernel*> seen;
  auto add = [&](Kernel* k, auto& self) -> void {
    if (k == nullptr || !seen.insert(k).second) return;
    out.push_back(k);
    const auto subs = call_backend([&] { return k->sub_kernels(); }, [&] { return describe_kernel(k) + ", in sub_kernels,"; });
    for (Kernel* sub : subs) self(sub, self);
  };
  std::vector<std::shared_ptr<Kernel>> built;  // kept alive while their sub-kernels are asked for
  {
    const Binding* b = state_->binding.load(std::memory_order_acquire);
    std::shared_lock lock(b->entries_mutex);
    for (const auto& per_interface : b->built_entries) {
      for (const auto& slot : per_interface) built.push_back(slot->kernel);
    }
  }
  for (const auto& k : built) add(k.get(), add);
  for (Op* sub : held_delegates()) {
    for (Kernel* k : sub->iter_kernels()) add(k, add);
  }
  return out;
}

std::vector<BuiltEntry> Op::built_entries(std::string_view interface) const {
  const Binding* b = state_->binding.load(std::memory_order_acquire);
  std::vector<BuiltEntry> out;
  if (b->builder) {
    for (std::string& key : b->target_kernels.keys()) out.push_back({*b->serving_target, std::move(key), nullptr});
    std::sort(out.begin(), out.end(), [](const BuiltEntry& x, const BuiltEntry& y) { return x.identity < y.identity; });
    if (!interface.empty()) return out;
  }
  const int index = interface.empty() ? -1 : cls_.interface_index(interface);
  if (!interface.empty() && index < 0) {
    throw OpNotAvailableError(cls_.name() + " has no kernel interface '" + std::string(interface) + "'");
  }
  std::shared_lock lock(b->entries_mutex);
  for (std::size_t i = 0; i < b->built_entries.size(); ++i) {
    if (index >= 0 && static_cast<int>(i) != index) continue;
    for (const auto& slot : b->built_entries[i]) {
      out.push_back({installed_->kernels[slot->kernel_index].key, slot->identity.str(), slot->kernel});
    }
  }
  return out;
}

CacheStats Op::cache_stats() const {
  const Binding* b = state_->binding.load(std::memory_order_acquire);
  return {b->calls.counters(), b->target_kernels.counters()};
}

CacheCapacity Op::cache_capacity() const {
  std::lock_guard lock(state_->select_mutex);
  return state_->capacity;
}

void Op::set_cache_capacity(const CacheCapacity& capacity) {
  const auto check = [&](std::size_t n, const char* which) {
    if (n == 0 || n > CacheCapacity::kMax) {
      throw ValueError(cls_.name() + " (" + instance_key_ + "): the " + which + " cache capacity must be 1 to " +
                       std::to_string(CacheCapacity::kMax) + ", not " + std::to_string(n));
    }
  };
  check(capacity.calls, "call");
  check(capacity.target_kernels, "target kernel");
  std::unique_lock lock(state_->select_mutex, std::defer_lock);
  if (state_->selecting_thread.load() != std::this_thread::get_id()) lock.lock();
  state_->capacity = capacity;
  Binding* b = state_->binding.load(std::memory_order_acquire);
  b->calls.set_capacity(capacity.calls);
  b->target_kernels.set_capacity(capacity.target_kernels);
}

std::vector<Op*> Op::held_delegates() const {
  std::shared_lock lock(state_->delegates_mutex);
  std::vector<Op*> out;
  for (const auto& decl : cls_.delegate_types()) {
    for (const auto& held : state_->delegates) {
      if (held.stage == decl.stage) out.push_back(held.op.get());
    }
  }
  return out;
}

Op* Op::find_delegate(std::string_view stage, const Identity& identity) const {
  std::shared_lock lock(state_->delegates_mutex);
  for (const auto& held : state_->delegates) {
    if (held.stage == stage && held.identity == identity) return held.op.get();
  }
  return nullptr;
}

Op* Op::hold_delegate(std::string_view stage, Identity identity, std::shared_ptr<Op> sub, bool injected) {
  const auto& decls = cls_.delegate_types();
  auto decl = std::find_if(decls.begin(), decls.end(), [&](const DelegateDecl& d) { return d.stage == stage; });
  if (decl == decls.end()) {
    const std::string stages = join_with(decls, [](std::string& s, const DelegateDecl& d) { s += d.stage; });
    throw TypeError(cls_.name() + ": delegate_for stage '" + std::string(stage) + "' is not declared; declared stages: " +
                    or_none(stages));
  }
  if (sub->name() != decl->op) {
    throw TypeError(cls_.name() + ": stage '" + decl->stage + "' holds a " + decl->op + ", not a " + sub->name());
  }
  std::unique_lock lock(state_->delegates_mutex);
  for (const auto& held : state_->delegates) {
    if (held.stage == stage && held.identity == identity) return held.op.get();  // a concurrent holder won
    if (held.op == sub) {
      throw ValueError(cls_.name() + ": sub-op " + sub->instance_key() + " is already held under stage '" + held.stage +
                       "' with identity " + held.identity.str() + "; it cannot also be held under stage '" +
                       std::string(stage) + "' with identity " + identity.str());
    }
  }
  Op* raw = sub.get();
  state_->delegates.push_back({std::string(stage), std::move(identity), std::move(sub), injected});
  lock.unlock();
  if (tune_requested()) raw->request_tune();
  return raw;
}

const std::string* Op::stage_of(const Op* sub) const {
  std::shared_lock lock(state_->delegates_mutex);
  const std::vector<std::string>& stages = plan_.composition_stages();  // the declared stages, in order
  for (const auto& held : state_->delegates) {
    if (held.op.get() != sub) continue;
    // Point into the plan, which lives for the process (records keep this name).
    for (const std::string& stage : stages) {
      if (stage == held.stage) return &stage;
    }
  }
  return nullptr;
}

}  // namespace tileops
