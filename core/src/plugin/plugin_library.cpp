#include "plugin/plugin_library.hpp"

#include <dlfcn.h>

#include <array>
#include <boost/dll/shared_library.hpp>
#include <cstring>
#include <vector>

#include "tileops/errors.hpp"
#include "tileops/plugin.hpp"

namespace tileops::plugin {
namespace {

namespace dll = boost::dll;

// Large enough for any sensible reason; longer ones are truncated by the plugin.
constexpr std::size_t kMessageCapacity = 2048;

std::shared_ptr<dll::shared_library> open_library(const std::filesystem::path& path) {
  // RTLD_NODELETE: see OpenedPlugin::library. Boost.DLL passes native flags through.
  const auto mode = static_cast<dll::load_mode::type>(dll::load_mode::rtld_now | dll::load_mode::rtld_local |
                                                      static_cast<dll::load_mode::type>(RTLD_NODELETE));
  auto library = std::make_shared<dll::shared_library>();
  std::error_code ec;
  library->load(path, ec, mode);
  if (ec) {
    // Boost.DLL's error-code overload leaves dlopen's own explanation in dlerror().
    const char* why = dlerror();
    throw BackendError("cannot be opened as a shared library: " + std::string(why != nullptr ? why : ec.message()));
  }
  return library;
}

void require_entry_points(const dll::shared_library& library) {
  if (!library.has(plugin_abi::kAbiVersionSymbol)) {
    throw BackendError("is not a tileops plugin: it does not export " + std::string(plugin_abi::kAbiVersionSymbol));
  }
  const int abi = library.get<plugin_abi::AbiVersionFn>(plugin_abi::kAbiVersionSymbol)();
  if (abi != TILEOPS_PLUGIN_ABI_VERSION) {
    throw BackendError("was built for plugin ABI version " + std::to_string(abi) + ", but this libtileops speaks version " +
                       std::to_string(TILEOPS_PLUGIN_ABI_VERSION) + "; rebuild it against this tileops");
  }
  std::string missing;
  for (const char* symbol : {plugin_abi::kNameSymbol, plugin_abi::kVersionSymbol, plugin_abi::kRegisterSymbol}) {
    if (library.has(symbol)) continue;
    missing += missing.empty() ? "" : ", ";
    missing += symbol;
  }
  if (!missing.empty()) throw BackendError("lacks plugin entry points: it does not export " + missing);
}

std::string text_or_empty(const char* text) { return text != nullptr ? std::string(text) : std::string(); }

}  // namespace

OpenedPlugin open_plugin(const PluginCandidate& candidate, Registrar& registrar) {
  auto library = open_library(candidate.path);
  require_entry_points(*library);

  const std::string declared = text_or_empty(library->get<plugin_abi::NameFn>(plugin_abi::kNameSymbol)());
  if (declared != candidate.name) {
    throw BackendError("declares the plugin name '" + declared + "', but its file name makes it '" + candidate.name +
                       "'; the file must be named libtileops_" + declared + ".so");
  }
  OpenedPlugin opened{text_or_empty(library->get<plugin_abi::VersionFn>(plugin_abi::kVersionSymbol)()), library};

  std::array<char, kMessageCapacity> message{};
  const int status = library->get<plugin_abi::RegisterFn>(plugin_abi::kRegisterSymbol)(&registrar, message.data(),
                                                                                        message.size());
  if (status != TILEOPS_PLUGIN_OK) {
    const std::string why(message.data(), strnlen(message.data(), message.size()));
    throw BackendError("failed to register: " + (why.empty() ? "status " + std::to_string(status) + " without a message" : why));
  }
  return opened;
}

}  // namespace tileops::plugin
