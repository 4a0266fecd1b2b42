// The kernel cache: kernel_for's lookup of an entry. A repeat of a cached call takes the entries
// its first call was handed, in order; any other lookup asks the binding's pool of built
// entries by call spec, and on a miss dispatches, asks entry_for for the identity and takes the
// pool's built entry for it, building one when it has none.
#include "join.hpp"
#include "logging.hpp"
#include "op/device_capture.hpp"
#include "op/dispatch.hpp"
#include "op/op_impl.hpp"
#include "plugin/backend_call.hpp"
#include "runtime/runtime_call.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/device_runtime.hpp"
#include "tileops/op.hpp"

namespace tileops {
namespace {

// The architecture of `device` from its runtime, when it has one.
std::optional<int> device_arch(const std::optional<Device>& device) {
  if (!device) return std::nullopt;
  DeviceRuntime* rt = find_device_runtime(device->type());
  if (rt == nullptr) return std::nullopt;
  return call_runtime(*rt, "facts", [&] { return rt->facts(device->index()); }).arch;
}

// Makes the call's device current on the process accelerator while an entry is built or
// tuned; devices of other types are left alone.
class DeviceScope {
 public:
  explicit DeviceScope(const std::optional<Device>& device) {
    if (!device) return;
    DeviceRuntime* accel = process_accelerator();
    if (accel == nullptr || accel->type() != device->type()) return;
    previous_ = call_runtime(*accel, "current_device", [&] { return accel->current_device(); });
    if (*previous_ == device->index()) return;
    call_runtime(*accel, "set_current_device", [&] { accel->set_current_device(device->index()); });
    runtime_ = accel;
  }
  // Restoring the device must not throw out of a destructor: a failure is logged instead.
  ~DeviceScope() {
    if (runtime_ == nullptr) return;
    try {
      call_runtime(*runtime_, "set_current_device", [&] { runtime_->set_current_device(*previous_); });
    } catch (const Error& e) {
      log().error("could not make device {} current again: {}", *previous_, e.what());
    }
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  DeviceRuntime* runtime_ = nullptr;
  std::optional<int> previous_;
};

}  // namespace

// Checks shared by kernel_for and key_for; returns the interface index.
static int check_interface(const OpClass& cls, std::string_view interface, const CallSpecOps& ops) {
  const int index = cls.interface_index(interface);
  if (index < 0) {
    const std::string names =
        or_none(join_with(cls.interfaces(), [](std::string& s, const InterfaceDecl& i) { s += i.name; }));
    throw OpNotAvailableError(cls.name() + " has no kernel interface '" + std::string(interface) +
                              "'; its interfaces are: " + names);
  }
  const InterfaceDecl& decl = cls.interfaces()[index];
  // Call spec types instantiated in another shared object have their own ops record: compare
  // the types only when the records differ.
  if (&ops != decl.request && ops.type != decl.request->type) {
    throw TypeError(cls.name() + ": interface '" + decl.name + "' takes a " + decl.request->name +
                    " call spec, not a " + ops.name);
  }
  return index;
}

EntryRef Op::kernel_entry(std::string_view interface, std::type_index interface_type, const CallSpec& call,
                          const CallSpecOps& ops) {
  const OpClass& cls = impl_->cls;
  const int index = check_interface(cls, interface, ops);
  const InterfaceDecl& decl = cls.interfaces()[index];
  if (decl.type != interface_type) {
    throw TypeError(cls.name() + ": interface '" + decl.name + "' is " + decl.type_name +
                    ", but kernel_for asked for another interface type");
  }
  CallFrame* frame = CallFrame::top();
  if (frame == nullptr || frame->op != this) {
    throw RuntimeError(cls.name() + ": kernel_for is only available inside a call of this op (from its forward)");
  }
  Binding* b = frame->binding;
  if (b == nullptr || !b->selected) {
    throw OpNotAvailableError(cls.name() + ": in-tree kernels cannot be selected: the call device is unknown (the "
                              "call names no device and the process has no accelerator)");
  }

  const std::optional<Device> device = call.device ? call.device : accelerator_current_device();
  if (const CachedCall* cached = frame->cached) {
    if (frame->step < cached->steps.size()) {
      const KernelStep& step = cached->steps[frame->step];
      if (step.interface == index && step.ops == &ops && step.device == device && ops.equal_fields(*step.call, call)) {
        ++frame->step;
        frame->note_kernel(step.built->key.kernel_index);
        return {step.built->kernel.get(), step.built->interface};
      }
    }
    frame->cached = nullptr;  // forward asked for other kernels than last time: look each up
  }
  const std::size_t hash = call_key_hash(index, device, call, ops);
  const auto hand_out = [&](std::shared_ptr<const CallSpec> stored, BuiltSlotPtr built) {
    const EntryRef entry{built->kernel.get(), built->interface};
    frame->note_kernel(built->key.kernel_index);
    if (frame->recording != nullptr) {
      frame->recording->steps.push_back({index, &ops, device, std::move(stored), std::move(built)});
    } else {
      frame->held.push_back(std::move(built));
    }
    return entry;
  };
  if (auto [built, stored] = b->entries.find(CallKeyProbe{index, &device, &call, &ops, hash}); built) {
    return hand_out(std::move(stored), std::move(built));
  }

  // Miss: select an implementation, then take or build its entry for the identity. A call
  // spec that gave no device gets the one the key carries.
  if (device_capture_active()) {
    refuse_in_capture(cls.name() + " (" + impl_->instance_key + ")",
                      "a call of interface '" + decl.name + "' missed the kernel cache (" + ops.fields_str(call) + ")");
  }
  std::shared_ptr<const CallSpec> stored;
  if (!call.device && device) {
    auto copy = std::const_pointer_cast<CallSpec>(ops.clone(call));
    copy->device = device;
    stored = std::move(copy);
  } else {
    stored = ops.clone(call);
  }
  const CallSpec& request = *stored;
  const InstalledKernels& table = *impl_->installed;
  const int chosen =
      select_implementation(cls.name(), table, index, decl.name, request, ops, DispatchDevice{device, device_arch(device)});
  const InstalledKernel& installed = table.kernels[chosen];
  const KernelType& type = *installed.type;
  auto fault_in = [&](const char* what) {
    return [&cls, &installed, what] {
      return cls.name() + ": " + what + " of kernel type '" + installed.key + "' (" + installed.origin() + ")";
    };
  };
  Entry entry = call_backend([&] { return type.entry_for(request); }, fault_in("entry_for"));

  const CallKey key{index, device, stored, &ops, hash};
  EntryKey built_key{index, chosen, std::move(entry.identity)};
  BuiltSlotPtr built = b->entries.reuse(built_key, key);
  if (!built) {
    std::shared_ptr<Kernel> kernel;
    {
      DeviceScope scope(device);
      kernel = call_backend([&] { return entry.factory(); }, fault_in("the constructor (entry factory)"));
      if (!kernel) {
        throw RuntimeError(cls.name() + ": the factory of '" + installed.key + "' (" + installed.origin() +
                           ") returned no kernel for identity " + built_key.identity.str());
      }
      if (tune_requested()) call_backend([&] { kernel->request_tune(); }, fault_in("request_tune"));
    }
    void* as_interface = type.as_interface(*kernel);
    built = b->entries.insert(std::make_shared<const BuiltSlot>(BuiltSlot{std::move(built_key), std::move(kernel), as_interface}), key);
  }
  return hand_out(std::move(stored), std::move(built));
}

std::string Op::key_for_erased(std::string_view interface, const CallSpec& call, const CallSpecOps& ops) const {
  const OpClass& cls = impl_->cls;
  const int index = check_interface(cls, interface, ops);
  const std::optional<Device> device = call.device ? call.device : accelerator_current_device();
  const int chosen = select_implementation(cls.name(), *impl_->installed, index, cls.interfaces()[index].name, call,
                                           ops, DispatchDevice{device, device_arch(device)});
  return impl_->installed->kernels[chosen].key;
}

}  // namespace tileops
