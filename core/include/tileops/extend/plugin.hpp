// Plugins: the C entry points a vendor plugin exports, the TILEOPS_PLUGIN macro that writes
// them, and what the host reports about the plugins it loaded.
//
// A plugin is a shared object named libtileops_<name>.so in a directory of the plugin path. It
// is a few lines:
//
//   TILEOPS_PLUGIN(acme, "1.0.0", registrar) {
//     registrar.register_device_runtime(std::make_shared<AcmeRuntime>());
//     registrar.register_kernel_type<AcmeRMSNorm>("RMSNormFwdOp", "acme_rms_norm");
//   }
//
// The host checks the file (a regular ELF shared object whose segments lie within it, not
// writable by everyone) and reads the ABI facts the plugin records (tileops_plugin_abi_facts)
// from it before opening it; then it opens the library, checks
// tileops_plugin_abi_version() and the facts again before calling anything else, checks that
// tileops_plugin_name() matches the file name, and calls tileops_plugin_register() once with a
// Registrar owned by the plugin. No exception crosses these entry points: the macro catches
// whatever the body throws and returns it as a status and a message, and the host then rolls
// back every registration the plugin made. A plugin registers nothing from static
// constructors: everything goes through the registrar it is given.
#pragma once

#include <boost/version.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <typeinfo>
#include <vector>

#include "tileops/export.hpp"
#include "tileops/extend/backend.hpp"
#include "tileops/extend/kernel.hpp"
#include "tileops/version.hpp"  // TILEOPS_VERSION_STRING, for plugins versioned with the core

// The plugin ABI this header describes. Bumped whenever a change to a public tileops type or
// entry point breaks plugins built against an earlier header; CHANGELOG.md lists each version.
#define TILEOPS_PLUGIN_ABI_VERSION 4

// Status values of tileops_plugin_register.
#define TILEOPS_PLUGIN_OK 0
#define TILEOPS_PLUGIN_FAILED 1

#define TILEOPS_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))

// The entry points, as the host looks them up. Every function is noexcept.
//   int tileops_plugin_abi_version()        the TILEOPS_PLUGIN_ABI_VERSION the plugin was built with
//   const tileops::plugin_abi::AbiFacts tileops_plugin_abi_facts
//                                           (data, not a function) the C++ ABI facts of the
//                                           plugin's build: TILEOPS_PLUGIN_ABI_FACTS
//   const char* tileops_plugin_name()       the plugin's name: <name> of libtileops_<name>.so
//   const char* tileops_plugin_version()    the plugin's own version string
//   int tileops_plugin_register(tileops::Registrar* registrar, char* message, std::size_t capacity)
//                                           registers everything through `registrar`; returns
//                                           TILEOPS_PLUGIN_OK, or TILEOPS_PLUGIN_FAILED after
//                                           writing a NUL-terminated reason of at most
//                                           `capacity` bytes (truncated) into `message`
namespace tileops::plugin_abi {

inline constexpr const char* kAbiVersionSymbol = "tileops_plugin_abi_version";
inline constexpr const char* kAbiFactsSymbol = "tileops_plugin_abi_facts";
inline constexpr const char* kNameSymbol = "tileops_plugin_name";
inline constexpr const char* kVersionSymbol = "tileops_plugin_version";
inline constexpr const char* kRegisterSymbol = "tileops_plugin_register";

using AbiVersionFn = int() noexcept;
using NameFn = const char*() noexcept;
using VersionFn = const char*() noexcept;
using RegisterFn = int(Registrar* registrar, char* message, std::size_t capacity) noexcept;

// Compiler families of AbiFacts::compiler.
inline constexpr std::uint32_t kCompilerOther = 0;
inline constexpr std::uint32_t kCompilerGcc = 1;
inline constexpr std::uint32_t kCompilerClang = 2;

// The facts that make two C++ builds agree on the types crossing the plugin boundary (std::string,
// std::function, std::shared_ptr, boost::container::small_vector, tileops's own classes). A
// plain C layout of 32-bit fields, so that the host can read it from the file before opening
// the library. Later ABI versions only append fields; `size` says how many the plugin has.
struct AbiFacts {
  std::uint32_t size;              // sizeof(AbiFacts) in the header the plugin was built with
  std::uint32_t abi_version;       // TILEOPS_PLUGIN_ABI_VERSION
  std::uint32_t tileops_major;     // the tileops headers' version
  std::uint32_t tileops_minor;
  std::uint32_t compiler;          // kCompilerGcc, kCompilerClang or kCompilerOther
  std::uint32_t compiler_version;  // major * 10000 + minor * 100 + patch
  std::uint32_t cxx_abi_version;   // __GXX_ABI_VERSION (the Itanium C++ ABI revision); 0 if undefined
  std::int32_t cxx11_string_abi;   // _GLIBCXX_USE_CXX11_ABI (libstdc++'s dual ABI); -1 without libstdc++
  std::uint32_t boost_version;     // BOOST_VERSION of the Boost headers
};

}  // namespace tileops::plugin_abi

#if defined(__clang__)
#define TILEOPS_PLUGIN_COMPILER_ ::tileops::plugin_abi::kCompilerClang
#define TILEOPS_PLUGIN_COMPILER_VERSION_ (__clang_major__ * 10000 + __clang_minor__ * 100 + __clang_patchlevel__)
#elif defined(__GNUC__)
#define TILEOPS_PLUGIN_COMPILER_ ::tileops::plugin_abi::kCompilerGcc
#define TILEOPS_PLUGIN_COMPILER_VERSION_ (__GNUC__ * 10000 + __GNUC_MINOR__ * 100 + __GNUC_PATCHLEVEL__)
#else
#define TILEOPS_PLUGIN_COMPILER_ ::tileops::plugin_abi::kCompilerOther
#define TILEOPS_PLUGIN_COMPILER_VERSION_ 0
#endif
#if defined(__GXX_ABI_VERSION)
#define TILEOPS_PLUGIN_CXX_ABI_VERSION_ __GXX_ABI_VERSION
#else
#define TILEOPS_PLUGIN_CXX_ABI_VERSION_ 0
#endif
#if defined(_GLIBCXX_USE_CXX11_ABI)
#define TILEOPS_PLUGIN_CXX11_STRING_ABI_ _GLIBCXX_USE_CXX11_ABI
#else
#define TILEOPS_PLUGIN_CXX11_STRING_ABI_ (-1)
#endif

// The AbiFacts of the translation unit that expands it: a macro, not a function, so that each
// side of the boundary records its own compiler's view.
#define TILEOPS_PLUGIN_ABI_FACTS                                                                     \
  ::tileops::plugin_abi::AbiFacts {                                                                  \
    sizeof(::tileops::plugin_abi::AbiFacts), TILEOPS_PLUGIN_ABI_VERSION, TILEOPS_VERSION_MAJOR,      \
        TILEOPS_VERSION_MINOR, TILEOPS_PLUGIN_COMPILER_, TILEOPS_PLUGIN_COMPILER_VERSION_,           \
        TILEOPS_PLUGIN_CXX_ABI_VERSION_, TILEOPS_PLUGIN_CXX11_STRING_ABI_, BOOST_VERSION             \
  }

namespace tileops::plugin_abi {

// Copies `text` into `message`, truncated to `capacity` bytes including the NUL.
inline void write_message(const std::string& text, char* message, std::size_t capacity) noexcept {
  if (message == nullptr || capacity == 0) return;
  const std::size_t n = text.size() < capacity - 1 ? text.size() : capacity - 1;
  std::memcpy(message, text.data(), n);
  message[n] = '\0';
}

// Runs a plugin's registration body and turns every exception into TILEOPS_PLUGIN_FAILED plus
// "<exception type>: <what()>" in `message`. Compiled into the plugin by TILEOPS_PLUGIN.
template <class Body>
int run_registration(Body body, Registrar* registrar, char* message, std::size_t capacity) noexcept {
  try {
    if (registrar == nullptr) {
      write_message("the host passed no registrar", message, capacity);
      return TILEOPS_PLUGIN_FAILED;
    }
    body(*registrar);
    return TILEOPS_PLUGIN_OK;
  } catch (const std::exception& e) {
    try {
      write_message(demangle(typeid(e)) + ": " + e.what(), message, capacity);
    } catch (...) {
      write_message("an exception was thrown and its message could not be copied", message, capacity);
    }
  } catch (...) {
    write_message("an exception that does not derive from std::exception was thrown", message, capacity);
  }
  return TILEOPS_PLUGIN_FAILED;
}

}  // namespace tileops::plugin_abi

// Defines a plugin's entry points; the braces that follow are the registration body, run with
// `registrar` (a tileops::Registrar&) in scope. `name` is an identifier equal to <name> of the
// file libtileops_<name>.so; `version` is a string literal. Use it once per plugin.
#define TILEOPS_PLUGIN(name, version, registrar)                                                         \
  static void tileops_plugin_body(::tileops::Registrar& registrar);                                      \
  TILEOPS_PLUGIN_EXPORT int tileops_plugin_abi_version() noexcept { return TILEOPS_PLUGIN_ABI_VERSION; } \
  TILEOPS_PLUGIN_EXPORT const ::tileops::plugin_abi::AbiFacts tileops_plugin_abi_facts =                 \
      TILEOPS_PLUGIN_ABI_FACTS;                                                                          \
  TILEOPS_PLUGIN_EXPORT const char* tileops_plugin_name() noexcept { return #name; }                     \
  TILEOPS_PLUGIN_EXPORT const char* tileops_plugin_version() noexcept { return version; }               \
  TILEOPS_PLUGIN_EXPORT int tileops_plugin_register(::tileops::Registrar* tileops_registrar,            \
                                                    char* tileops_message,                              \
                                                    std::size_t tileops_capacity) noexcept {            \
    return ::tileops::plugin_abi::run_registration(tileops_plugin_body, tileops_registrar,              \
                                                   tileops_message, tileops_capacity);                  \
  }                                                                                                      \
  static void tileops_plugin_body(::tileops::Registrar& registrar)

namespace tileops {

// A plugin the host loaded and whose registrations are in effect.
struct PluginInfo {
  std::string name;
  std::string version;
  std::filesystem::path path;
  // What the host noticed at load without refusing the plugin, e.g. a kernel type that may make
  // dispatch ambiguous; each is also logged as a warning.
  std::vector<std::string> warnings;
};

// A library or plugin directory the host could not load. Nothing the plugin registered remains.
struct PluginLoadFailure {
  std::filesystem::path path;
  std::optional<std::string> plugin;  // the plugin name from the file name; nullopt for a directory
  std::string reason;
};

// A plugin file the host found and deliberately did not load.
struct SkippedPlugin {
  std::string name;
  std::filesystem::path path;
  // "disabled by environment variable TILEOPS_DISABLE_PLUGINS" (or by disable_plugins in a config
  // file's line, or given to set_config), or "shadowed by <path>"
  std::string reason;
};

// The plugins load_backends() loaded, in load order. Calls load_backends() first.
TILEOPS_API std::vector<PluginInfo> loaded_plugins();
// The libraries and directories load_backends() failed on, in discovery order. Calls
// load_backends() first.
TILEOPS_API std::vector<PluginLoadFailure> load_failures();
// The plugin files load_backends() skipped, in discovery order. Calls load_backends() first.
TILEOPS_API std::vector<SkippedPlugin> skipped_plugins();

}  // namespace tileops
