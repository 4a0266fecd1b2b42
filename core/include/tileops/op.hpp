// Op: the base class of every operator. It owns an op instance's lifecycle:
//  * construction (five steps, in order): load the backend registry; check the manifest
//    parameters and keep the construction indices; install the implementation table and check
//    the kernel contracts; register the instance under a key never reused in the process;
//    build the (empty) binding and running state. No device is probed, no kernel is built.
//  * every call enters call(args, body) and, unless a Graph is being captured, run_call, which
//    runs the seven steps: open the call (thread-local call stack), check the signature,
//    detect an empty write, select the target (first call that runs an implementation),
//    execute (empty-write result, the target's kernel, or the body), check the result, and
//    record (stages, pop, last_call, report to the parent call).
//  * on an exception (std::exception) the stack pops, last_call keeps the previous record, and
//    if this call selected the target the binding (target, builder, kernel caches) is reset,
//    recursively for held sub-ops. What plugin code throws (detectors, builders, target
//    kernels, refusals, entry_for, kernel constructors, kernels, device runtimes) that is not a
//    tileops::Error, `throw 42` included, becomes a BackendError naming the op, the kernel type
//    or target and who registered it, with the original message.
//
// A subclass settles its manifest parameters, hands them to the Op constructor with the
// target, and writes one method, forward, which builds a call spec and calls
// kernel_for<Interface>(name, call) — or, in a composite op, calls sub-ops held through
// delegate_for.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tileops/call_args.hpp"
#include "tileops/export.hpp"
#include "tileops/op_class.hpp"
#include "tileops/signature.hpp"
#include "tileops/target.hpp"
#include "tileops/value.hpp"

namespace tileops {

// Kernel authors' types (tileops/extend/kernel.hpp, tileops/extend/identity.hpp). An
// application names them only through the members below that an op's forward uses, so it
// needs their definitions only where it writes a forward.
class Kernel;
class Identity;
struct CallSpec;
struct CallSpecOps;
template <class C>
const CallSpecOps& call_spec_ops();

// (flops, bytes) of the last call, from the manifest's roofline.
struct Roofline {
  double flops = 0;
  double bytes = 0;
};

// One built kernel, as built_entries() reports it.
struct BuiltEntry {
  std::string key;                  // implementation key; the target name for a target kernel
  std::string identity;             // the build identity, or the target kernel's cache key
  std::shared_ptr<Kernel> kernel;   // null for target kernels
};

// The counts of one of an op instance's caches, since its binding was last reset.
struct CacheCounters {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t evictions = 0;
  std::size_t entries = 0;
  std::size_t capacity = 0;
};

// An op instance's three bounded caches: `calls` holds repeats of a call (its check, record and
// kernels) by the facts of its tensors; `target_kernels` the kernels a target's builder made;
// `entries` the built entries of its in-tree kernels, by implementation and identity. A hit of
// the last two reuses a kernel, a miss builds one.
struct CacheStats {
  CacheCounters calls;
  CacheCounters target_kernels;
  CacheCounters entries;
};

// How many entries each cache of an op instance holds at most (each at least 1). The built
// entries share the bound of `calls`.
struct CacheCapacity {
  static constexpr std::size_t kMax = std::size_t{1} << 20;
  std::size_t calls = 256;
  std::size_t target_kernels = 4096;
};

// An entry as kernel_for hands it out: the built entry's kernel and its interface subobject.
struct EntryRef {
  Kernel* kernel = nullptr;
  void* interface = nullptr;
};

class TILEOPS_API Op {
 public:
  virtual ~Op();
  Op(const Op&) = delete;
  Op& operator=(const Op&) = delete;

  const OpClass& op_class() const;
  const std::string& name() const;
  // The key this instance is registered under; unique in the process and never reused.
  const std::string& instance_key() const;
  // How many ops are alive in the process now (constructed and not yet destroyed, on any
  // thread): what an application reads to check that it releases its ops.
  static std::size_t live_count();
  // The target given at construction (nullopt: process default, else detection).
  const Target& target() const;
  // The selected target ("builtin" for the in-tree kernels), or nullopt before selection.
  std::optional<std::string> serving_target() const;
  // Every manifest parameter's final value (given or default), in signature order.
  const ParamMap& params() const;

  // The boundary operator (one of op_class().compile_op_names()) a call of this instance enters
  // by when it passes the inputs `present` marks (one flag per manifest input) and, when
  // `out_passed`, the `out` buffer. Throws TypeError when the class has no compile boundary,
  // `present` does not hold one flag per input, a required input is absent, or `out` is passed
  // to an op that takes none.
  const std::string& boundary_operator(std::span<const bool> present, bool out_passed) const;

  // The record of the last completed call. Throws RuntimeError before any call completed.
  SignatureCallPtr last_call() const;
  // (flops, bytes) of last_call() from the manifest's roofline.
  Roofline eval_roofline() const;

  // Puts this op and its held sub-ops in tuned mode: every built kernel gets request_tune()
  // now, every kernel built later right after it is built. A target's kernels cannot be
  // tuned: the op warns once.
  virtual void request_tune();
  bool tune_requested() const;
  // The op's own configuration, else the first configured kernel's (iter_kernels order).
  virtual std::optional<std::string> kernel_config() const;
  // Every kernel in this op's entries (and their sub-kernels) and in held sub-ops, each once.
  std::vector<Kernel*> iter_kernels() const;
  // The entries built for `interface` (in-tree kernels), or, with no interface, every entry
  // built so far: the in-tree ones of each interface in declaration order, after the target
  // kernels. When a target serves the op and an interface is named: every target kernel,
  // whatever `interface` says. Throws OpNotAvailableError for an interface the class lacks.
  std::vector<BuiltEntry> built_entries(std::string_view interface = {}) const;
  // The held sub-ops, in stage order.
  std::vector<Op*> held_delegates() const;

  // The counts of this instance's caches (not its sub-ops'). A reset of the binding (a failed
  // selecting call) starts them again from zero.
  CacheStats cache_stats() const;
  // The bound of each cache; construction takes the config's call_cache_capacity (which bounds
  // the built entries too) and target_kernel_cache_capacity. Lowering a bound evicts at once. Throws ValueError for a bound
  // of 0 or above CacheCapacity::kMax.
  CacheCapacity cache_capacity() const;
  void set_cache_capacity(const CacheCapacity& capacity);

  // Which implementation key dispatch selects for `call` on `interface`, without building or
  // caching anything; the device facts come from the call device's runtime, as on
  // kernel_for's miss path. Throws like kernel_for's miss path.
  template <class C>
  std::string key_for(std::string_view interface, const C& call) const {
    return key_for_erased(interface, call, call_spec_ops<C>());
  }

  // The single entry of a call: diverts to the graph being captured on this thread, if any,
  // else runs run_call. A subclass's typed operator() packs its arguments and calls this.
  OpOutputs call(const CallArgs& args);
  // Runs one call through the seven steps with forward as the body. Public for boundary
  // operators and graph replay.
  OpOutputs run_call(const CallArgs& args);

 protected:
  // The computation of one call (the only method an op writes): build a call spec and call
  // kernel_for, or call held sub-ops. Runs only when no target serves the op.
  virtual OpOutputs forward(const CallArgs& args) = 0;

  // Construction. `params` holds the subclass's final manifest parameter values; `injected`
  // names the extra constructor arguments it received (each must be in the class's
  // injected_parameters allowlist).
  Op(const OpClass& cls, ParamMap params, Target target, std::initializer_list<std::string_view> injected = {});

  // Inside forward: params() with each construction-time tensor that does not declare
  // `device: cpu` on the call device (copied there on the first call on that device and kept
  // by the instance). Outside a call of this op (e.g. forward run on meta tensors while a Graph
  // is captured): params().
  const ParamMap& call_params() const;

  // Throws TypeError unless `name` is in the class's injected_parameters allowlist.
  void check_injected_parameter(std::string_view name) const;

  // The entry serving `call` at interface `interface`, as interface type I. A hit is one
  // lookup under a shared lock and reads no device property. Throws OpNotAvailableError when
  // `interface` is not one of the op's interfaces or no implementation runs on the device,
  // TypeError when I is not that interface's type,
  // ValueError when no implementation serves the call or dispatch is ambiguous.
  template <class I>
  I& kernel_for(std::string_view interface, const typename I::Request& call) {
    return *static_cast<I*>(kernel_entry(interface, typeid(I), call, call_spec_ops<typename I::Request>()).interface);
  }
  // kernel_for at a generated interface (ops::<Op>::<name>), under its own name.
  template <class I>
    requires requires { I::slot; }
  I& kernel_for(const typename I::Call& call) {
    return kernel_for<I>(I::slot, call);
  }
  // The type-erased core of kernel_for; `call` must be of `ops`'s type.
  EntryRef kernel_entry(std::string_view interface, std::type_index interface_type, const CallSpec& call,
                        const CallSpecOps& ops);

  // Holds (building on first use) the sub-op of stage `stage` for `identity`. With `given`,
  // holds that instance as passed (it keeps its own target); otherwise builds
  // Sub(args..., target()) so that the sub-op inherits this op's target. The same
  // (stage, identity) returns the instance already held; holding one instance under two
  // (stage, identity) pairs raises ValueError; a stage not declared, or a Sub that is not the
  // declared class, raises TypeError.
  template <class Sub, class... Args>
  Sub& delegate_for(std::string_view stage, const Identity& identity, std::shared_ptr<Sub> given, Args&&... args) {
    Op* held = find_delegate(stage, identity);
    if (held == nullptr) {
      const bool injected = given != nullptr;
      std::shared_ptr<Op> sub = injected ? std::shared_ptr<Op>(std::move(given))
                                         : std::shared_ptr<Op>(std::make_shared<Sub>(std::forward<Args>(args)..., target()));
      held = hold_delegate(stage, identity, std::move(sub), injected);
    }
    return static_cast<Sub&>(*held);
  }

 private:
  std::string key_for_erased(std::string_view interface, const CallSpec& call, const CallSpecOps& ops) const;
  Op* find_delegate(std::string_view stage, const Identity& identity) const;
  Op* hold_delegate(std::string_view stage, const Identity& identity, std::shared_ptr<Op> sub, bool injected);

  // Everything the instance holds: its class, construction state, implementation table, key,
  // binding and running state (core/src/op/op_impl.hpp).
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tileops
