// What loading the cuda plugin costs a process: cuBLASLt (half a GiB) is not mapped until a
// GEMM on a CUDA device needs it. Runs wherever the plugin loads, with or without a GPU.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "tileops/extend/plugin.hpp"

namespace {

bool mapped(const std::string& library) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(library) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("loading the cuda plugin does not map cuBLASLt") {
  bool loaded = false;
  for (const tileops::PluginInfo& p : tileops::loaded_plugins()) loaded = loaded || p.name == "cuda";
  if (!loaded) {
    MESSAGE("the cuda plugin is not built or did not load: nothing to check");
    return;
  }
  CHECK(mapped("libcudart.so"));
  CHECK_FALSE(mapped("libcublasLt.so"));
}
