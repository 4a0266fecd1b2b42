// The architectures each plugin's kernel types serve, for `tileops info`: what a GPU plugin was
// built for (the rocm plugin's offload targets), read from the kernel types' supported_archs.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tileops::cli {

// From `ops` (reports::ops()), for each plugin owning kernel types, one entry per device type
// its kernel types run on: {"device", "archs": the union of the supported_archs lists, as
// tileops::arch_name writes them, in increasing order, "every_arch": whether some kernel type serves
// every architecture}. An object keyed by plugin name.
nlohmann::json plugin_kernel_archs(const nlohmann::json& ops);

// One line of text for a plugin's entry of plugin_kernel_archs, e.g. "hip kernels built for
// gfx906, gfx90a"; "" when every kernel type serves every architecture.
std::string kernel_archs_text(const nlohmann::json& entries);

}  // namespace tileops::cli
