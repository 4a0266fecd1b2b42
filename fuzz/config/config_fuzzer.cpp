// The config file parser: the input is the text of a tileops.conf, written to a file of a
// private directory and parsed. A ConfigError (or any tileops::Error) is a refusal; anything
// else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tileops/config.hpp"
#include "tileops/errors.hpp"

namespace {

namespace fs = std::filesystem;

// The private directory, in memory when the system has /dev/shm (a file on disk per input would
// make the disk, not the parser, the bottleneck); removed at exit.
// Never destroyed, so that the exit handler can still read it.
const fs::path& config_dir() {
  static const fs::path* const dir = [] {
    const fs::path base = fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    std::string name = (base / "tileops-fuzz-config-XXXXXX").string();
    if (mkdtemp(name.data()) == nullptr) std::abort();
    auto* path = new fs::path(name);
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(config_dir(), ec);
    });
    return path;
  }();
  return *dir;
}

const fs::path& config_path() {
  static const fs::path path = config_dir() / "tileops.conf";
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  {
    std::ofstream out(config_path(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) std::abort();
  }
  try {
    const tileops::Config c = tileops::parse_config_file(config_path());
    for (const auto& p : c.plugin_path) (void)p.string();
  } catch (const tileops::Error&) {
  }
  return 0;
}
