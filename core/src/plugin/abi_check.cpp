#include "plugin/abi_check.hpp"

#include <cstddef>
#include <vector>

namespace tileops::plugin {
namespace {

std::string version_str(std::uint32_t v, std::uint32_t major_unit, std::uint32_t minor_unit) {
  return std::to_string(v / major_unit) + "." + std::to_string(v / minor_unit % (major_unit / minor_unit)) + "." +
         std::to_string(v % minor_unit);
}

std::string compiler_str(const plugin_abi::AbiFacts& f) {
  const std::string version = version_str(f.compiler_version, 10000, 100);
  switch (f.compiler) {
    case plugin_abi::kCompilerGcc: return "GCC " + version;
    case plugin_abi::kCompilerClang: return "Clang " + version;
    default: return "an unknown compiler";
  }
}

std::string string_abi_str(std::int32_t abi) {
  if (abi < 0) return "no libstdc++";
  return abi == 1 ? "libstdc++ C++11 string ABI" : "libstdc++ old (pre-C++11) string ABI";
}

}  // namespace

const plugin_abi::AbiFacts& host_abi_facts() {
  static const plugin_abi::AbiFacts facts = TILEOPS_PLUGIN_ABI_FACTS;
  return facts;
}

std::string abi_facts_str(const plugin_abi::AbiFacts& f) {
  return "tileops " + std::to_string(f.tileops_major) + "." + std::to_string(f.tileops_minor) + ", " + compiler_str(f) +
         " (C++ ABI " + std::to_string(f.cxx_abi_version) + "), " + string_abi_str(f.cxx11_string_abi) + ", Boost " +
         version_str(f.boost_version, 100000, 100);
}

std::optional<std::string> abi_mismatch(const plugin_abi::AbiFacts& plugin, const plugin_abi::AbiFacts& host) {
  if (plugin.abi_version != host.abi_version) {
    return "was built for plugin ABI version " + std::to_string(plugin.abi_version) +
           ", but this libtileops speaks version " + std::to_string(host.abi_version) +
           "; rebuild it against this tileops";
  }
  if (plugin.size < sizeof(plugin_abi::AbiFacts)) {
    return "records " + std::to_string(plugin.size) + " bytes of ABI facts, but plugin ABI version " +
           std::to_string(host.abi_version) + " has " + std::to_string(sizeof(plugin_abi::AbiFacts)) +
           "; it was not built with the TILEOPS_PLUGIN macro of this tileops";
  }
  std::vector<std::string> differ;
  if (plugin.tileops_major != host.tileops_major || plugin.tileops_minor != host.tileops_minor) {
    differ.push_back("the tileops versions");
  }
  if (plugin.compiler != host.compiler) differ.push_back("the compiler families");
  if (plugin.cxx_abi_version != host.cxx_abi_version) differ.push_back("the C++ ABI versions");
  if (plugin.cxx11_string_abi != host.cxx11_string_abi) differ.push_back("the libstdc++ string ABIs");
  if (plugin.boost_version != host.boost_version) differ.push_back("the Boost versions");
  if (differ.empty()) return std::nullopt;
  std::string list;
  for (std::size_t i = 0; i < differ.size(); ++i) {
    if (i > 0) list += i + 1 == differ.size() ? " and " : ", ";
    list += differ[i];
  }
  return "was built with " + abi_facts_str(plugin) + ", but this libtileops was built with " + abi_facts_str(host) +
         ": " + list + " differ, so the C++ types that cross the plugin boundary may not agree; rebuild the "
         "plugin against this tileops with the same compiler family and Boost";
}

}  // namespace tileops::plugin
