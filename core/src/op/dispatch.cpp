#include "op/dispatch.hpp"

#include <algorithm>

#include "join.hpp"
#include "logging.hpp"
#include "plugin/backend_call.hpp"
#include "tileops/arch_name.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"

namespace tileops {
namespace {

std::string archs_str(std::string_view device_type, const std::vector<int>& archs) {
  return "[" + join_with(archs, [&](std::string& s, int a) { s += arch_name(device_type, a); }) + "]";
}

}  // namespace

int select_implementation(const std::string& op, const InstalledKernels& table, int interface,
                          const std::string& interface_name, const CallSpec& call, const CallSpecOps& ops,
                          const DispatchDevice& where) {
  const std::vector<int>& keys = table.by_interface[interface];
  const std::string call_str = ops.name + ops.fields_str(call);
  if (!where.device) {
    throw OpNotAvailableError(op + ": in-tree kernels do not run on an unknown device: the call names no device and "
                              "the process has no accelerator (interface '" + interface_name + "')");
  }
  const Device& device = *where.device;
  const std::string type(device.type().name());

  std::vector<int> available_type;
  for (int k : keys) {
    const auto& devices = table.kernels[k].type->devices;
    if (std::find(devices.begin(), devices.end(), type) != devices.end()) available_type.push_back(k);
  }
  if (available_type.empty()) {
    std::vector<std::string> runs_on;
    for (int k : keys) runs_on.push_back(table.kernels[k].key + " on " + join(table.kernels[k].type->devices));
    // The message names the targets that do build this op, so that a
    // caller who forced the in-tree kernels (or whose device no detector claims) sees the way out.
    throw OpNotAvailableError(op + ": in-tree kernels do not run on " + device.str() + " (interface '" +
                              interface_name + "': " + (runs_on.empty() ? "no implementations" : join(runs_on)) +
                              "); known targets for this op: [" + join(registered_targets(op)) + "]");
  }

  std::vector<std::string> reasons;
  std::vector<int> applicable;
  for (int k : keys) {
    const InstalledKernel& kernel = table.kernels[k];
    const KernelType& t = *kernel.type;
    std::optional<std::string> reason;
    if (!kernel.disabled_by.empty()) {
      reason = "disabled by " + kernel.disabled_by;
    } else if (std::find(t.devices.begin(), t.devices.end(), type) == t.devices.end()) {
      reason = "runs on " + join(t.devices) + ", not " + type;
    } else if (!t.supported_archs.empty() &&
               (!where.arch || std::find(t.supported_archs.begin(), t.supported_archs.end(), *where.arch) ==
                                   t.supported_archs.end())) {
      reason = "supports archs " + archs_str(type, t.supported_archs) + ", not " +
               (where.arch ? arch_name(type, *where.arch) : std::string("an unknown arch"));
    } else {
      reason = call_backend([&] { return t.refusal(call); },
                            [&] { return op + ": the refusal of kernel type '" + kernel.key + "' (" + kernel.origin() + ")"; });
    }
    if (reason) {
      reasons.push_back(kernel.key + ": " + *reason);
      log().debug("{} [{}] dispatch {}: drop '{}': {}", op, interface_name, call_str, kernel.key, *reason);
    } else {
      applicable.push_back(k);
    }
  }
  if (applicable.empty()) {
    throw ValueError(op + ": no implementation serves this call " + call_str + " on " + device.str() +
                     " (interface '" + interface_name + "'): " + join(reasons));
  }

  for (int k : applicable) {
    if (table.kernels[k].preferred_by.empty()) continue;
    log().debug("{} [{}] dispatch {}: selected '{}', preferred by {}", op, interface_name, call_str, table.kernels[k].key,
                table.kernels[k].preferred_by);
    return k;
  }

  const bool any_specific = std::any_of(applicable.begin(), applicable.end(),
                                        [&](int k) { return !table.kernels[k].type->general; });
  std::vector<int> winners;
  for (int k : applicable) {
    if (any_specific && table.kernels[k].type->general) {
      log().debug("{} [{}] dispatch {}: drop '{}': general, outranked by a specific implementation", op, interface_name,
                  call_str, table.kernels[k].key);
      continue;
    }
    const bool outranked = std::any_of(applicable.begin(), applicable.end(), [&](int other) {
      const auto& beats = table.kernels[other].outranks;
      return other != k && std::find(beats.begin(), beats.end(), k) != beats.end();
    });
    if (outranked) {
      log().debug("{} [{}] dispatch {}: drop '{}': another applicable key is preferred over it", op, interface_name,
                  call_str, table.kernels[k].key);
      continue;
    }
    winners.push_back(k);
  }
  if (winners.size() != 1) {
    std::vector<std::string> tied;
    for (int k : winners) tied.push_back(table.kernels[k].key + " (" + table.kernels[k].origin() + ")");
    throw ValueError(op + ": dispatch is ambiguous for " + call_str + " on " + device.str() + " (interface '" +
                     interface_name + "'): " + join(tied) +
                     " all apply and none is preferred over the others; declare preferred_over in one of them, "
                     "choose one for this op with prefer_kernels (" + op + "=<key>), or leave one out with "
                     "disable_kernels or its plugin with disable_plugins");
  }
  log().debug("{} [{}] dispatch {}: selected '{}'", op, interface_name, call_str, table.kernels[winners[0]].key);
  return winners[0];
}

}  // namespace tileops
