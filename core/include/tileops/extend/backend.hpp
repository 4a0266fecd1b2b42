// The backend registry: how kernels, whole-op targets and device runtimes join tileops.
//
// Two ways for a backend to take over calls (docs/plugin-guide.md: "A kernel
// type" and "A whole-op target"):
//  * register_kernel_type adds an implementation to an op's kernel interface; it competes in
//    dispatch by its own availability, applicability and precedence, and enters every op
//    instance constructed afterwards;
//  * a *target* (register_detector + register_kernel_builder) replaces whole ops: an instance
//    that selects the target runs the builder's kernel for every call (except empty writes).
//
// Registration normally happens while a plugin loads (through a Registrar, so that a failed
// plugin leaves nothing behind), before the first op is constructed. The free functions
// register on behalf of the application itself.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tileops/call_args.hpp"
#include "tileops/device.hpp"
#include "tileops/export.hpp"
#include "tileops/extend/kernel.hpp"
#include "tileops/target.hpp"
#include "tileops/tensor.hpp"
#include "tileops/value.hpp"

namespace tileops {

class CollectiveProvider;
class DeviceRuntime;

// A kernel built by a target for one (device, input dtypes and shapes) combination. It
// receives the call-time inputs in signature order (undefined for optional inputs not passed)
// and the caller's `out` buffer, and returns the outputs in signature order. The core has
// already checked the call against the signature, made every unwritten input contiguous and
// placed every tensor on the call device.
using TargetKernel = std::function<OpOutputs(const CallArgs& args)>;

// Builds a target's kernel for an op: one TensorSpec per signature input, in order (nullopt
// for an optional input not passed), and the instance's manifest parameters by name.
using TargetBuilder =
    std::function<TargetKernel(std::span<const std::optional<TensorSpec>> inputs, const ParamMap& params)>;

// Says whether a target claims a device.
using Detector = std::function<bool(const Device& device)>;

// A kernel type registered for an op under a key.
struct RegisteredKernelType {
  std::string op;
  std::string key;
  std::string owner;  // the plugin that registered it; "" for the application itself
  std::shared_ptr<const KernelType> type;
};

// One registration a Registrar made, as the plugin host checks it after the plugin's
// registration function returned.
struct Registration {
  enum class Kind { kernel_type, kernel_builder, detector, device_runtime, collective_provider };
  Kind kind;
  std::string op;    // kernel_type and kernel_builder: the op registered for; "" otherwise
  std::string name;  // the key, the target, or the device type
};

// Registers, and on rollback() removes again, everything one owner (a plugin, a test)
// registers. Destroying a Registrar that was not committed rolls it back.
class TILEOPS_API Registrar {
 public:
  explicit Registrar(std::string owner);
  ~Registrar();
  Registrar(const Registrar&) = delete;
  Registrar& operator=(const Registrar&) = delete;

  const std::string& owner() const { return owner_; }

  // Adds implementation `key` to op `op`. Throws BackendError, naming both owners, when the op
  // already has a registered kernel type under that key. (The plugin host checks a plugin's
  // kernel types against the op's class once the plugin registered everything; a key equal to
  // one of the op's in-tree keys is otherwise reported when the op is constructed.)
  void register_kernel_type(const std::string& op, const std::string& key, KernelType type);
  template <KernelImplementation Impl>
  void register_kernel_type(const std::string& op, const std::string& key) {
    register_kernel_type(op, key, make_kernel_type<Impl>());
  }
  // Registers implementation `Impl` of a generated kernel interface (ops::<Op>::<name>) under
  // `key`, for the op the interface belongs to.
  template <KernelImplementation Impl>
    requires requires { Impl::Interface::op_name; }
  void add(const std::string& key) {
    register_kernel_type(std::string(Impl::Interface::op_name), key, make_kernel_type<Impl>());
  }
  // Registers `builder` as target `target`'s kernel builder for op `op`. Throws BackendError,
  // naming both owners, when (op, target) already has one, or when `target` is BUILTIN or
  // REFERENCE.
  void register_kernel_builder(const std::string& op, const std::string& target, TargetBuilder builder);
  // Registers the detector of target `target`. Throws BackendError, naming both owners, when it
  // already has one.
  void register_detector(const std::string& target, Detector detect);
  // Registers a device runtime. Throws BackendError, naming both owners, when its device type
  // already has one.
  void register_device_runtime(std::shared_ptr<DeviceRuntime> runtime);
  // Registers the collective provider of its device type (tileops/extend/collectives.hpp).
  // Throws BackendError, naming both owners, when that type already has one.
  void register_collective_provider(std::shared_ptr<CollectiveProvider> provider);

  // What this registrar registered and has not rolled back, in registration order.
  const std::vector<Registration>& registrations() const { return registrations_; }

  // Keeps the registrations beyond this object's lifetime.
  void commit() { committed_ = true; }
  // Removes every registration made through this registrar, newest first. Never throws.
  void rollback() noexcept;

 private:
  void record(Registration registration, std::function<void()> undo, const std::function<void()>& add);

  std::string owner_;
  std::vector<std::function<void()>> undo_;  // parallel to registrations_
  std::vector<Registration> registrations_;
  bool committed_ = false;
};

// Registration on behalf of the application (owner ""). Same rules as Registrar's.
TILEOPS_API void register_kernel_type(const std::string& op, const std::string& key, KernelType type);
template <KernelImplementation Impl>
void register_kernel_type(const std::string& op, const std::string& key) {
  register_kernel_type(op, key, make_kernel_type<Impl>());
}
TILEOPS_API void register_kernel_builder(const std::string& op, const std::string& target, TargetBuilder builder);
TILEOPS_API void register_detector(const std::string& target, Detector detect);

// Targets that registered a builder for `op`, or, with no op, every target that registered a
// builder or a detector; sorted by name.
TILEOPS_API std::vector<std::string> registered_targets(std::string_view op = {});
// The ops target `target` has builders for, sorted.
TILEOPS_API std::vector<std::string> target_ops(std::string_view target);
// The kernel types registered for `op`, in registration order.
TILEOPS_API std::vector<RegisteredKernelType> registered_kernel_types(std::string_view op);

}  // namespace tileops
