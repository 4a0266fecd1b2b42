// The kernel cache: kernel_for's lookup of an entry. A repeat of a cached call takes the
// entries its first call was handed, in order; any other lookup goes through
// Binding::entries_by_call to Binding::built_entries, and on a miss dispatches and builds.
#include "join.hpp"
#include "logging.hpp"
#include "op/binding.hpp"
#include "op/call_frame.hpp"
#include "op/device_capture.hpp"
#include "op/dispatch.hpp"
#include "op/installed_kernels.hpp"
#include "plugin/backend_call.hpp"
#include "runtime/runtime_call.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/device_runtime.hpp"
#include "tileops/op.hpp"

namespace tileops {
namespace {

std::string stated_facts(const CallSpec& call) {
  std::vector<std::string_view> stated;
  if (call.arch) stated.push_back("'arch'");
  if (call.sm_count) stated.push_back("'sm_count'");
  if (call.smem_budget) stated.push_back("'smem_budget'");
  return join(stated);
}

std::size_t call_key_hash(int interface, const std::optional<Device>& device, const CallSpec& call,
                          const CallSpecOps& ops) {
  std::size_t h = hash_combine(static_cast<std::size_t>(interface), device ? std::hash<Device>{}(*device) : 0x5bd1e995);
  return hash_combine(h, ops.hash_fields(call));
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
  const int index = check_interface(cls_, interface, ops);
  const InterfaceDecl& decl = cls_.interfaces()[index];
  if (decl.type != interface_type) {
    throw TypeError(cls_.name() + ": interface '" + decl.name + "' is " + decl.type_name +
                    ", but kernel_for asked for another interface type");
  }
  if (call.arch || call.sm_count || call.smem_budget) {
    throw TypeError(cls_.name() + ": this call spec states [" + stated_facts(call) +
                    "]; device facts are derived from the call's device, and only key_for accepts them");
  }
  CallFrame* frame = CallFrame::top();
  if (frame == nullptr || frame->op != this) {
    throw RuntimeError(cls_.name() + ": kernel_for is only available inside a call of this op (from its forward)");
  }
  Binding* b = frame->binding;
  if (b == nullptr || !b->selected) {
    throw OpNotAvailableError(cls_.name() + ": in-tree kernels cannot be selected: the call device is unknown (the "
                              "call names no device and the process has no accelerator)");
  }

  const std::optional<Device> device = call.device ? call.device : accelerator_current_device();
  if (const CachedCall* cached = frame->cached) {
    if (frame->step < cached->steps.size()) {
      const KernelStep& step = cached->steps[frame->step];
      if (step.interface == index && step.ops == &ops && step.device == device && ops.equal_fields(*step.call, call)) {
        ++frame->step;
        frame->note_kernel(step.kernel_index);
        return step.entry;
      }
    }
    frame->cached = nullptr;  // forward asked for other kernels than last time: look each up
  }
  const std::size_t hash = call_key_hash(index, device, call, ops);
  const CallKeyProbe probe{index, &device, &call, &ops, hash};
  const auto hand_out = [&](std::shared_ptr<const CallSpec> stored, const BuiltSlot& slot) {
    const EntryRef entry{slot.kernel.get(), slot.interface};
    if (frame->recording != nullptr) {
      frame->recording->steps.push_back({index, &ops, device, std::move(stored), entry, slot.kernel_index});
    }
    frame->note_kernel(slot.kernel_index);
    return entry;
  };
  {
    std::shared_lock lock(b->entries_mutex);
    auto it = b->entries_by_call.find(probe);
    if (it != b->entries_by_call.end()) {
      std::shared_ptr<const CallSpec> stored = it->first.call;
      const BuiltSlot& slot = *it->second;
      lock.unlock();
      return hand_out(std::move(stored), slot);
    }
  }

  // Miss: select an implementation, then build or reuse its entry for the identity. A call
  // spec that gave no device gets the one the key carries.
  if (device_capture_active()) {
    refuse_in_capture(cls_.name() + " (" + instance_key_ + ")",
                      "a call of interface '" + decl.name + "' missed the kernel cache (" + ops.fields_str(call) + ")");
  }
  std::shared_ptr<const CallSpec> filled;
  if (!call.device && device) {
    auto copy = std::const_pointer_cast<CallSpec>(ops.clone(call));
    copy->device = device;
    filled = std::move(copy);
  }
  const CallSpec& request = filled ? *filled : call;
  DispatchDevice where{device, std::nullopt};
  if (device) {
    if (DeviceRuntime* rt = find_device_runtime(device->type())) {
      where.arch = call_runtime(*rt, "facts", [&] { return rt->facts(device->index()); }).arch;
    }
  }
  const int chosen = select_implementation(cls_.name(), *installed_, index, decl.name, request, ops, where);
  const InstalledKernel& installed = installed_->kernels[chosen];
  const KernelType& type = *installed.type;
  auto fault_in = [&](const char* what) {
    return [this, &installed, what] {
      return cls_.name() + ": " + what + " of kernel type '" + installed.key + "' (" + installed.origin() + ")";
    };
  };
  Entry entry = call_backend([&] { return type.entry_for(request); }, fault_in("entry_for"));

  BuiltSlot* slot = nullptr;
  {
    std::shared_lock lock(b->entries_mutex);
    for (const auto& built : b->built_entries[index]) {
      if (built->kernel_index == chosen && built->identity == entry.identity) slot = built.get();
    }
  }
  if (slot == nullptr) {
    std::shared_ptr<Kernel> kernel;
    {
      DeviceScope scope(device);
      kernel = call_backend([&] { return entry.factory(); }, fault_in("the constructor (entry factory)"));
      if (!kernel) {
        throw RuntimeError(cls_.name() + ": the factory of '" + installed.key + "' (" + installed.origin() +
                           ") returned no kernel for identity " + entry.identity.str());
      }
      if (tune_requested()) call_backend([&] { kernel->request_tune(); }, fault_in("request_tune"));
    }
    auto built = std::make_unique<BuiltSlot>(BuiltSlot{chosen, std::move(entry.identity), kernel, type.as_interface(*kernel)});
    std::unique_lock lock(b->entries_mutex);
    for (const auto& existing : b->built_entries[index]) {
      if (existing->kernel_index == chosen && existing->identity == built->identity) slot = existing.get();
    }
    if (slot == nullptr) {
      slot = built.get();
      b->built_entries[index].push_back(std::move(built));
    }
  }
  std::unique_lock lock(b->entries_mutex);
  if (b->entries_by_call.size() >= b->calls.capacity()) b->entries_by_call.clear();
  auto [it, inserted] = b->entries_by_call.try_emplace(CallKey{index, device, filled ? filled : ops.clone(call), &ops, hash}, slot);
  std::shared_ptr<const CallSpec> stored = it->first.call;
  lock.unlock();
  return hand_out(std::move(stored), *slot);
}

std::string Op::key_for_erased(std::string_view interface, const CallSpec& call, const CallSpecOps& ops) const {
  const int index = check_interface(cls_, interface, ops);
  DispatchDevice where{call.device ? call.device : accelerator_current_device(), call.arch};
  if (!where.arch && where.device) {
    if (DeviceRuntime* rt = find_device_runtime(where.device->type())) {
      where.arch = call_runtime(*rt, "facts", [&] { return rt->facts(where.device->index()); }).arch;
    }
  }
  const int chosen =
      select_implementation(cls_.name(), *installed_, index, cls_.interfaces()[index].name, call, ops, where);
  return installed_->kernels[chosen].key;
}

}  // namespace tileops
