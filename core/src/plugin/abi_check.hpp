// The plugin ABI check: whether a plugin's build agrees with this libtileops's on every fact
// that decides the layout of the types crossing the plugin boundary. Internal; the tests
// compile their own copy.
#pragma once

#include <optional>
#include <string>

#include "tileops/extend/plugin.hpp"

namespace tileops::plugin {

// The facts of this libtileops's own build.
const plugin_abi::AbiFacts& host_abi_facts();

// "tileops 0.1, GCC 12.2.0 (C++ ABI 1017), libstdc++ C++11 string ABI, Boost 1.81.0".
std::string abi_facts_str(const plugin_abi::AbiFacts& facts);

// nullopt when a plugin built with `plugin` can be loaded by a host built with `host`: the same
// plugin ABI version, tileops major.minor, compiler family, C++ ABI version (__GXX_ABI_VERSION),
// libstdc++ string ABI and Boost version. Otherwise the reason, naming both sides and what
// differs. The compilers' own versions are reported, not compared: within a family, the C++ ABI
// version is what changes layouts and names.
std::optional<std::string> abi_mismatch(const plugin_abi::AbiFacts& plugin, const plugin_abi::AbiFacts& host);

}  // namespace tileops::plugin
