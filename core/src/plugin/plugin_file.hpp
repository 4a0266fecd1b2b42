// The checks on a plugin file before the host opens it. Internal; the tests compile their own copy.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tileops/extend/plugin.hpp"

namespace tileops::plugin {

// What checking a plugin file found.
struct CheckedFile {
  std::filesystem::path resolved;               // the regular file the entry names, links resolved
  std::optional<plugin_abi::AbiFacts> facts;    // the ABI facts the file records, when it has them
  std::vector<std::string> warnings;            // e.g. an insecure file loaded because the config allows it
};

// Checks the directory entry `path` (named libtileops_<name>.so) before it is opened, and throws
// BackendError with the reason when it must not be:
//  * it resolves to a regular file (a dangling link, a link loop, a directory are named);
//  * neither the file nor the directory holding the entry or the file is writable by everyone,
//    unless `allow_insecure` (then each is a warning);
//  * it is an ELF shared object for this machine, and its header, its program headers and every
//    segment they describe lie within the file (a truncated file would otherwise crash the
//    process with SIGBUS inside dlopen).
// Reads the plugin's AbiFacts from the file's dynamic symbols when it exports
// tileops_plugin_abi_facts with its value in the file. Reads at most the headers, the dynamic
// symbol and string tables and the facts; never runs any of the file's code.
CheckedFile check_plugin_file(const std::filesystem::path& path, bool allow_insecure);

}  // namespace tileops::plugin
