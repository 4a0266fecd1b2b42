#include "plugin/plugin_library.hpp"

#include <dlfcn.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <vector>

#include "plugin/abi_check.hpp"
#include "plugin/dlopen_error.hpp"
#include "plugin/plugin_file.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/plugin.hpp"

namespace tileops::plugin {
namespace {

// Large enough for any sensible reason; longer ones are truncated by the plugin.
constexpr std::size_t kMessageCapacity = 2048;

// dlopen, called through a pointer whose type allows exceptions: dlopen is declared noexcept
// for C++, and a compiler trusting that would let an exception from a static constructor pass
// the handler below unseen.
void* (*volatile g_dlopen)(const char*, int) = dlopen;

// The plugin whose library this thread is opening, for the terminate handler below.
thread_local const PluginCandidate* t_opening = nullptr;
std::terminate_handler g_previous_terminate = nullptr;

std::string describe_current_exception() {
  try {
    throw;
  } catch (const std::exception& e) {
    return "threw " + demangle(typeid(e)) + ": " + e.what();
  } catch (...) {
    return "threw a value that is no std::exception";
  }
}

// A static constructor of the library threw while dlopen ran it. Depending on how the frames
// between were compiled, the exception either ends in std::terminate (dlopen is noexcept) or
// unwinds out of dlopen, leaving the dynamic loader's lock held and the library half
// initialised: the next library load on any other thread then blocks forever. Neither can be
// undone, so the process stops at once, saying which plugin did it and how to get past it.
[[noreturn]] void stop_after_constructor_fault(const PluginCandidate& plugin, const std::string& what) {
  std::fprintf(stderr,
               "tileops: fatal: plugin '%s' (%s) %s while the dynamic loader was opening it (in a static "
               "constructor). The loader cannot undo that, and any later library load would hang, so the process "
               "stops here. Remove the file, or keep it from loading with disable_plugins = %s in the config (or "
               "TILEOPS_DISABLE_PLUGINS=%s).\n",
               plugin.name.c_str(), plugin.path.c_str(), what.c_str(), plugin.name.c_str(), plugin.name.c_str());
  std::fflush(stderr);
  std::_Exit(EXIT_FAILURE);
}

[[noreturn]] void terminate_while_opening() {
  if (t_opening == nullptr) {
    if (g_previous_terminate != nullptr) g_previous_terminate();
    std::abort();
  }
  stop_after_constructor_fault(*t_opening, std::current_exception() ? describe_current_exception()
                                                                    : std::string("called std::terminate"));
}

// Installs terminate_while_opening for the scope of one dlopen on this thread.
class OpeningScope {
 public:
  explicit OpeningScope(const PluginCandidate& plugin) {
    t_opening = &plugin;
    g_previous_terminate = std::set_terminate(terminate_while_opening);
  }
  ~OpeningScope() {
    std::set_terminate(g_previous_terminate);
    t_opening = nullptr;
  }
  OpeningScope(const OpeningScope&) = delete;
  OpeningScope& operator=(const OpeningScope&) = delete;
};

// Opens the library with its symbols bound now and kept local to it. RTLD_NODELETE: see
// OpenedPlugin::library.
std::shared_ptr<void> open_library(const PluginCandidate& candidate) {
  void* handle = nullptr;
  {
    const OpeningScope scope(candidate);
    try {
      handle = g_dlopen(candidate.path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    } catch (...) {
      stop_after_constructor_fault(candidate, describe_current_exception());
    }
  }
  if (handle == nullptr) {
    const char* why = dlerror();
    throw BackendError("cannot be opened as a shared library: " +
                       (why != nullptr ? readable_dlopen_error(why) : std::string("dlopen failed")));
  }
  return std::shared_ptr<void>(handle, [](void* h) { dlclose(h); });
}

// The address of `name` in the library, or nullptr.
void* find_symbol(const std::shared_ptr<void>& library, const char* name) { return dlsym(library.get(), name); }

template <class F>
F* entry_point(const std::shared_ptr<void>& library, const char* name) {
  return reinterpret_cast<F*>(find_symbol(library, name));
}

void require_entry_points(const std::shared_ptr<void>& library) {
  auto* abi_version = entry_point<plugin_abi::AbiVersionFn>(library, plugin_abi::kAbiVersionSymbol);
  if (abi_version == nullptr) {
    throw BackendError("is not a tileops plugin: it does not export " + std::string(plugin_abi::kAbiVersionSymbol));
  }
  const int abi = abi_version();
  if (abi != TILEOPS_PLUGIN_ABI_VERSION) {
    throw BackendError("was built for plugin ABI version " + std::to_string(abi) + ", but this libtileops speaks version " +
                       std::to_string(TILEOPS_PLUGIN_ABI_VERSION) + "; rebuild it against this tileops");
  }
  std::string missing;
  for (const char* symbol : {plugin_abi::kAbiFactsSymbol, plugin_abi::kNameSymbol, plugin_abi::kVersionSymbol,
                             plugin_abi::kRegisterSymbol}) {
    if (find_symbol(library, symbol) != nullptr) continue;
    missing += missing.empty() ? "" : ", ";
    missing += symbol;
  }
  if (!missing.empty()) throw BackendError("lacks plugin entry points: it does not export " + missing);
  const auto* facts = static_cast<const plugin_abi::AbiFacts*>(find_symbol(library, plugin_abi::kAbiFactsSymbol));
  if (auto mismatch = abi_mismatch(*facts, host_abi_facts())) throw BackendError(*mismatch);
}

std::string text_or_empty(const char* text) { return text != nullptr ? std::string(text) : std::string(); }

}  // namespace

OpenedPlugin open_plugin(const PluginCandidate& candidate, Registrar& registrar, bool allow_insecure) {
  CheckedFile checked = check_plugin_file(candidate.path, allow_insecure);
  if (checked.facts) {
    if (auto mismatch = abi_mismatch(*checked.facts, host_abi_facts())) throw BackendError(*mismatch);
  }
  std::shared_ptr<void> library = open_library(candidate);
  require_entry_points(library);

  const std::string declared = text_or_empty(entry_point<plugin_abi::NameFn>(library, plugin_abi::kNameSymbol)());
  if (declared != candidate.name) {
    throw BackendError("declares the plugin name '" + declared + "', but its file name makes it '" + candidate.name +
                       "'; the file must be named libtileops_" + declared + ".so");
  }
  OpenedPlugin opened{text_or_empty(entry_point<plugin_abi::VersionFn>(library, plugin_abi::kVersionSymbol)()),
                      library, std::move(checked.warnings)};

  std::array<char, kMessageCapacity> message{};
  const int status =
      entry_point<plugin_abi::RegisterFn>(library, plugin_abi::kRegisterSymbol)(&registrar, message.data(), message.size());
  if (status != TILEOPS_PLUGIN_OK) {
    const std::string why(message.data(), strnlen(message.data(), message.size()));
    throw BackendError("failed to register: " + (why.empty() ? "status " + std::to_string(status) + " without a message" : why));
  }
  return opened;
}

}  // namespace tileops::plugin
