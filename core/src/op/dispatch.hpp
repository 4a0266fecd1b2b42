// Dispatch: selecting exactly one implementation of a kernel interface for a call, by
// availability (devices, supported_archs), applicability (refusal) and precedence (general,
// preferred_over). No numeric priorities; registration order never matters.
#pragma once

#include <optional>
#include <string>

#include "op/installed_kernels.hpp"
#include "tileops/device.hpp"
#include "tileops/extend/kernel.hpp"

namespace tileops {

// What dispatch knows about the call's device.
struct DispatchDevice {
  std::optional<Device> device;  // nullopt: the call device is unknown
  std::optional<int> arch;       // nullopt: not known (architecture filters then exclude)
};

// The installed index of the implementation serving `call` at interface `interface`.
// Throws OpNotAvailableError "in-tree kernels do not run on <device>" when no key of the
// interface runs on the device type (or the device is unknown), ValueError "no implementation
// serves this call" (listing each key's reason) or "dispatch is ambiguous" (listing the tied
// keys). At debug log level, logs every candidate and why it was dropped.
int select_implementation(const std::string& op, const InstalledKernels& table, int interface,
                          const std::string& interface_name, const CallSpec& call, const CallSpecOps& ops,
                          const DispatchDevice& where);

}  // namespace tileops
