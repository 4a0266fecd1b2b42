// Op construction, accessors, records, tuning, enumeration and sub-op holding.
#include "tileops/op.hpp"

#include <algorithm>
#include <unordered_set>

#include "join.hpp"
#include "op/instance_registry.hpp"
#include "op/op_impl.hpp"
#include "plugin/backend_call.hpp"
#include "tileops/config.hpp"
#include "tileops/errors.hpp"

namespace tileops {

Op::Impl::Impl(Op& op, const OpClass& op_class, Target target_given)
    : self(op), cls(op_class), plan(signature_plan(op_class)), target(std::move(target_given)) {}

Op::Op(const OpClass& cls, ParamMap params, Target target, std::initializer_list<std::string_view> injected)
    : impl_(std::make_unique<Impl>(*this, cls, std::move(target))) {
  Impl& s = *impl_;
  if (s.target && s.target->empty()) throw ValueError(cls.name() + ": the target name is empty");
  // 1. The registry must exist before any call: a first call may already be inside a graph
  //    capture, where loading plugins is not allowed.
  load_backends();
  for (std::string_view name : injected) check_injected_parameter(name);
  // 2. Parameters are checked once, at construction, and the solved indices kept.
  s.construction = std::make_unique<const ConstructionState>(s.plan.check_construction(params));
  if (!s.plan.call_device_params().empty()) s.copies = std::make_unique<ConstructionCopies>();
  // 3. The implementation table depends only on the class and the registry: resolve it now.
  s.installed = std::make_unique<const InstalledKernels>(InstalledKernels::install(cls, s.target != REFERENCE));
  // 4. The key must exist before any graph records this instance.
  s.instance_key = register_instance(this);
  // 5. Binding and running state start empty.
  const Config cfg = config();
  s.capacity = {cfg.call_cache_capacity, cfg.target_kernel_cache_capacity};
  s.bindings.push_back(std::make_unique<Binding>(s.capacity));
  s.binding.store(s.bindings.back().get(), std::memory_order_release);
}

Op::~Op() { unregister_instance(impl_->instance_key); }

const OpClass& Op::op_class() const { return impl_->cls; }
const std::string& Op::name() const { return impl_->cls.name(); }
const std::string& Op::instance_key() const { return impl_->instance_key; }

std::size_t Op::live_count() { return live_instance_count(); }

const Target& Op::target() const { return impl_->target; }

void Op::check_injected_parameter(std::string_view name) const {
  const auto& allowed = impl_->cls.injected_parameters();
  if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
    throw TypeError(impl_->cls.name() + ": '" + std::string(name) +
                    "' is neither a manifest parameter nor in the class's injected_parameters");
  }
}

std::optional<std::string> Op::serving_target() const {
  const Binding* b = impl_->binding.load(std::memory_order_acquire);
  if (!b->committed.load(std::memory_order_acquire) && impl_->selecting_thread.load() != std::this_thread::get_id()) {
    return std::nullopt;
  }
  return b->selected ? b->serving_target : std::nullopt;
}

const ParamMap& Op::params() const { return impl_->construction->params; }

bool Op::tune_requested() const { return impl_->tune_requested.load(std::memory_order_acquire); }

const std::string& Op::boundary_operator(std::span<const bool> present, bool out_passed) const {
  const SignaturePlan& plan = signature_plan(impl_->cls);
  return plan.compile_op_names()[plan.boundary_for(*impl_->construction, present, out_passed)];
}

SignatureCallPtr Op::last_call() const {
  SignatureCallPtr record = impl_->last_call();
  if (!record) {
    throw RuntimeError(name() + " (" + instance_key() + "): last_call is not available: no call has completed yet");
  }
  return record;
}

Roofline Op::eval_roofline() const {
  const RooflineFigures f = impl_->plan.eval_roofline(*last_call());
  return {f.flops, f.bytes};
}

std::string Op::Impl::describe_kernel(const Kernel* kernel) const {
  for (const BuiltSlotPtr& built : binding.load(std::memory_order_acquire)->entries.entries()) {
    if (built->kernel.get() != kernel) continue;
    const InstalledKernel& k = installed->kernels[built->key.kernel_index];
    return cls.name() + ": the kernel of kernel type '" + k.key + "' (" + k.origin() + ")";
  }
  return cls.name() + ": a kernel held inside another of its kernels";
}

void Op::request_tune() {
  impl_->tune_requested.store(true, std::memory_order_release);
  for (Kernel* k : iter_kernels()) {
    call_backend([&] { k->request_tune(); }, [&] { return impl_->describe_kernel(k) + ", in request_tune,"; });
  }
  for (Op* sub : held_delegates()) sub->request_tune();
  const Binding* b = impl_->binding.load(std::memory_order_acquire);
  if (b->committed.load(std::memory_order_acquire) && b->builder) impl_->warn_target_cannot_tune();
}

std::optional<std::string> Op::kernel_config() const {
  for (Kernel* k : iter_kernels()) {
    if (auto c = call_backend([&] { return k->config(); }, [&] { return impl_->describe_kernel(k) + ", in config,"; })) {
      return c;
    }
  }
  return std::nullopt;
}

std::vector<Kernel*> Op::iter_kernels() const {
  std::vector<Kernel*> out;
  std::unordered_set<Kernel*> seen;
  auto add = [&](Kernel* k, auto& self) -> void {
    if (k == nullptr || !seen.insert(k).second) return;
    out.push_back(k);
    const auto subs = call_backend([&] { return k->sub_kernels(); },
                                   [&] { return impl_->describe_kernel(k) + ", in sub_kernels,"; });
    for (Kernel* sub : subs) self(sub, self);
  };
  // Held while their sub-kernels are asked for.
  const std::vector<BuiltSlotPtr> built = impl_->binding.load(std::memory_order_acquire)->entries.entries();
  for (const BuiltSlotPtr& slot : built) add(slot->kernel.get(), add);
  for (Op* sub : held_delegates()) {
    for (Kernel* k : sub->iter_kernels()) add(k, add);
  }
  return out;
}

std::vector<BuiltEntry> Op::built_entries(std::string_view interface) const {
  const OpClass& cls = impl_->cls;
  const Binding* b = impl_->binding.load(std::memory_order_acquire);
  std::vector<BuiltEntry> out;
  if (b->builder) {
    for (std::string& key : b->target_kernels.keys()) out.push_back({*b->serving_target, std::move(key), nullptr});
    std::sort(out.begin(), out.end(), [](const BuiltEntry& x, const BuiltEntry& y) { return x.identity < y.identity; });
    if (!interface.empty()) return out;
  }
  const int index = interface.empty() ? -1 : cls.interface_index(interface);
  if (!interface.empty() && index < 0) {
    throw OpNotAvailableError(cls.name() + " has no kernel interface '" + std::string(interface) + "'");
  }
  for (const BuiltSlotPtr& slot : b->entries.entries()) {
    if (index >= 0 && slot->key.interface != index) continue;
    out.push_back({impl_->installed->kernels[slot->key.kernel_index].key, slot->key.identity.str(), slot->kernel});
  }
  return out;
}

CacheStats Op::cache_stats() const {
  const Binding* b = impl_->binding.load(std::memory_order_acquire);
  return {b->calls.counters(), b->target_kernels.counters(), b->entries.counters()};
}

CacheCapacity Op::cache_capacity() const {
  std::lock_guard lock(impl_->select_mutex);
  return impl_->capacity;
}

void Op::set_cache_capacity(const CacheCapacity& capacity) {
  const auto check = [&](std::size_t n, const char* which) {
    if (n == 0 || n > CacheCapacity::kMax) {
      throw ValueError(name() + " (" + instance_key() + "): the " + which + " cache capacity must be 1 to " +
                       std::to_string(CacheCapacity::kMax) + ", not " + std::to_string(n));
    }
  };
  check(capacity.calls, "call");
  check(capacity.target_kernels, "target kernel");
  std::unique_lock lock(impl_->select_mutex, std::defer_lock);
  if (impl_->selecting_thread.load() != std::this_thread::get_id()) lock.lock();
  impl_->capacity = capacity;
  impl_->binding.load(std::memory_order_acquire)->set_capacity(capacity);
}

std::vector<Op*> Op::held_delegates() const {
  std::shared_lock lock(impl_->delegates_mutex);
  std::vector<Op*> out;
  for (const auto& decl : impl_->cls.delegate_types()) {
    for (const auto& held : impl_->delegates) {
      if (held.stage == decl.stage) out.push_back(held.op.get());
    }
  }
  return out;
}

Op* Op::find_delegate(std::string_view stage, const Identity& identity) const {
  std::shared_lock lock(impl_->delegates_mutex);
  for (const auto& held : impl_->delegates) {
    if (held.stage == stage && held.identity == identity) return held.op.get();
  }
  return nullptr;
}

Op* Op::hold_delegate(std::string_view stage, const Identity& identity, std::shared_ptr<Op> sub, bool injected) {
  const auto& decls = impl_->cls.delegate_types();
  auto decl = std::find_if(decls.begin(), decls.end(), [&](const DelegateDecl& d) { return d.stage == stage; });
  if (decl == decls.end()) {
    const std::string stages = join_with(decls, [](std::string& s, const DelegateDecl& d) { s += d.stage; });
    throw TypeError(impl_->cls.name() + ": delegate_for stage '" + std::string(stage) + "' is not declared; declared stages: " +
                    or_none(stages));
  }
  if (sub->name() != decl->op) {
    throw TypeError(impl_->cls.name() + ": stage '" + decl->stage + "' holds a " + decl->op + ", not a " + sub->name());
  }
  std::unique_lock lock(impl_->delegates_mutex);
  for (const auto& held : impl_->delegates) {
    if (held.stage == stage && held.identity == identity) return held.op.get();  // a concurrent holder won
    if (held.op == sub) {
      throw ValueError(impl_->cls.name() + ": sub-op " + sub->instance_key() + " is already held under stage '" + held.stage +
                       "' with identity " + held.identity.str() + "; it cannot also be held under stage '" +
                       std::string(stage) + "' with identity " + identity.str());
    }
  }
  Op* raw = sub.get();
  impl_->delegates.push_back({std::string(stage), identity, std::move(sub), injected});
  lock.unlock();
  if (tune_requested()) raw->request_tune();
  return raw;
}

const std::string* Op::Impl::stage_of(const Op* sub) const {
  std::shared_lock lock(delegates_mutex);
  const std::vector<std::string>& stages = plan.composition_stages();  // the declared stages, in order
  for (const auto& held : delegates) {
    if (held.op.get() != sub) continue;
    // Point into the plan, which lives for the process (records keep this name).
    for (const std::string& stage : stages) {
      if (stage == held.stage) return &stage;
    }
  }
  return nullptr;
}

}  // namespace tileops
