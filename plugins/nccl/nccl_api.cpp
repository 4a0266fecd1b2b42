#include "nccl_api.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <cstring>

#include "tileops/errors.hpp"

namespace tileops::nccl {
namespace {

constexpr std::size_t kMaxPathBytes = 4096;

template <class F>
void resolve(void* library, const std::string& file, const char* name, F& entry) {
  entry = reinterpret_cast<F>(dlsym(library, name));
  if (entry == nullptr) throw RuntimeError(file + " has no entry point " + name + "; it is not an NCCL 2 library");
}

std::string mapped_path(void* library, const std::string& fallback) {
  const link_map* map = nullptr;
  if (dlinfo(library, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr && map->l_name[0] != 0) {
    return map->l_name;
  }
  return fallback;
}

// Where the loader searches a bare file name, for the message when it is not found.
std::string search_places() {
  const char* ld_path = std::getenv("LD_LIBRARY_PATH");
  std::string places = "LD_LIBRARY_PATH (";
  places += ld_path != nullptr && ld_path[0] != 0 ? std::string(ld_path).substr(0, 512) : std::string("unset");
  return places + "), the loader's cache (/etc/ld.so.cache) and the system library directories";
}

}  // namespace

Library open_library(const LibrarySpec& spec) {
  const char* named = std::getenv(spec.env.c_str());
  const bool from_env = named != nullptr && named[0] != 0;
  if (from_env && std::strlen(named) > kMaxPathBytes) {
    throw RuntimeError(spec.env + " is " + std::to_string(std::strlen(named)) + " bytes long; expected a path of at most " +
                       std::to_string(kMaxPathBytes) + " bytes");
  }
  const std::string file = from_env ? std::string(named) : spec.file;
  void* library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    const std::string reason = why != nullptr ? why : "unknown reason";
    if (from_env) throw RuntimeError("cannot load " + file + " (named by " + spec.env + "): " + reason);
    throw RuntimeError("cannot load " + file + ": the loader searched " + search_places() + ": " + reason +
                       "; set " + spec.env + " to the library's path");
  }
  Library lib;
  resolve(library, file, "ncclGetVersion", lib.api.get_version);
  resolve(library, file, "ncclGetUniqueId", lib.api.get_unique_id);
  resolve(library, file, "ncclCommInitRank", lib.api.comm_init_rank);
  resolve(library, file, "ncclCommDestroy", lib.api.comm_destroy);
  resolve(library, file, "ncclAllReduce", lib.api.all_reduce);
  resolve(library, file, "ncclAllGather", lib.api.all_gather);
  resolve(library, file, "ncclReduceScatter", lib.api.reduce_scatter);
  resolve(library, file, "ncclGetErrorString", lib.api.get_error_string);
  int code = 0;
  if (const Result r = lib.api.get_version(&code); r != kSuccess) throw RuntimeError(failure(lib.api, "ncclGetVersion", r));
  // NCCL 2.9 and later: major * 10000 + minor * 100 + patch.
  lib.version = std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
  lib.path = mapped_path(library, file);
  return lib;
}

std::string failure(const Api& api, const char* call, Result result) {
  const char* what = api.get_error_string != nullptr ? api.get_error_string(result) : nullptr;
  return std::string(call) + " failed: " + (what != nullptr ? what : "no description") + " (result " +
         std::to_string(result) + ")";
}

}  // namespace tileops::nccl
