// Architecture numbers (DeviceFacts::arch, KernelType::supported_archs) as people read them.
#pragma once

#include <string>
#include <string_view>

#include "tileops/export.hpp"

namespace tileops {

// Architecture number `arch` of a device of type `device_type` as its vendor names it, for
// messages: "sm_90" on cuda (major * 10 + minor), "gfx90a" on hip (the number is the gfx name's
// digits read as hexadecimal), the decimal number on any other type.
TILEOPS_API std::string arch_name(std::string_view device_type, int arch);

}  // namespace tileops
