// The checks on a plugin file before it is opened: links resolved to a
// regular file, no file or directory writable by everyone, ELF header, program headers and
// segments within the file. Each broken file is built here from the good corpus plugin.
#include <doctest/doctest.h>

#include <elf.h>
#include <link.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>

#include "plugin/plugin_file.hpp"
#include "tileops/extend/plugin_host.hpp"
#include "plugin_host/corpus.hpp"
#include "support/temp_dir.hpp"
#include "tileops/errors.hpp"

using tileops::BackendError;
using tileops::plugin::check_plugin_file;
using tileops::plugin::PluginHost;
using tileops::test::corpus;
using tileops::test::TempDir;
namespace fs = std::filesystem;

namespace {

fs::path good_plugin() { return corpus("good") / "libtileops_good.so"; }

std::string file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Writes `bytes` as `dir`/libtileops_<name>.so and returns its path.
fs::path write_plugin(const TempDir& dir, const std::string& name, const std::string& bytes) {
  const fs::path p = dir.path() / ("libtileops_" + name + ".so");
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

// The single load failure of loading `dir`.
tileops::PluginLoadFailure load_failure(const fs::path& dir, bool allow_insecure = false) {
  PluginHost host;
  host.load({dir}, {.allow_insecure = allow_insecure});
  REQUIRE(host.failures().size() == 1);
  CHECK(host.loaded().empty());
  return host.failures()[0];
}

}  // namespace

TEST_CASE("the good plugin passes the file checks, and its ABI facts are read from the file") {
  const auto checked = check_plugin_file(good_plugin(), false);
  CHECK(checked.resolved == good_plugin());
  CHECK(checked.warnings.empty());
  REQUIRE(checked.facts.has_value());
  CHECK(checked.facts->abi_version == TILEOPS_PLUGIN_ABI_VERSION);
  CHECK(checked.facts->size == sizeof(tileops::plugin_abi::AbiFacts));
  CHECK(checked.facts->boost_version == BOOST_VERSION);
}

TEST_CASE("a symbolic link to a plugin is resolved and loads under the link's name") {
  TempDir dir;
  fs::create_symlink(good_plugin(), dir.path() / "libtileops_good.so");
  PluginHost host;
  host.load({dir.path()});
  REQUIRE(host.loaded().size() == 1);
  CHECK(host.loaded()[0].path == dir.path() / "libtileops_good.so");
  CHECK(host.failures().empty());
}

TEST_CASE("a dangling link named like a plugin is a load failure naming its target, not silently skipped") {
  TempDir dir;
  fs::create_symlink(dir.path() / "gone.so", dir.path() / "libtileops_dangling.so");
  const auto f = load_failure(dir.path());
  CHECK(f.plugin == "dangling");
  CHECK(f.path == dir.path() / "libtileops_dangling.so");
  CHECK(f.reason == "is a dangling symbolic link: its target '" + (dir.path() / "gone.so").string() + "' does not exist");
}

TEST_CASE("a symbolic link loop named like a plugin is a load failure") {
  TempDir dir;
  fs::create_symlink(dir.path() / "libtileops_loop.so", dir.path() / "other.so");
  fs::create_symlink(dir.path() / "other.so", dir.path() / "libtileops_loop.so");
  const auto f = load_failure(dir.path());
  CHECK(f.plugin == "loop");
  CHECK(f.reason == "is a symbolic link that loops: resolving it meets too many levels of symbolic links");
}

TEST_CASE("a directory named like a plugin is a load failure") {
  TempDir dir;
  fs::create_directories(dir.path() / "libtileops_dir.so");
  CHECK(load_failure(dir.path()).reason == "is a directory, not a plugin file");
}

TEST_CASE("a truncated plugin is refused before dlopen, which would crash the process with SIGBUS") {
  const std::string bytes = file_bytes(good_plugin());
  REQUIRE(bytes.size() > 4096);
  TempDir dir;
  SUBCASE("cut inside its last loadable segment") {
    // Debug sections follow the segments and dlopen never reads them: cut where it would.
    const auto* header = reinterpret_cast<const ElfW(Ehdr)*>(bytes.data());
    const auto* segments = reinterpret_cast<const ElfW(Phdr)*>(bytes.data() + header->e_phoff);
    std::size_t end = 0;
    for (int i = 0; i < header->e_phnum; ++i) {
      if (segments[i].p_type == PT_LOAD) end = std::max<std::size_t>(end, segments[i].p_offset + segments[i].p_filesz / 2);
    }
    write_plugin(dir, "cut", bytes.substr(0, end));
    const auto f = load_failure(dir.path());
    CHECK(f.reason.starts_with("is truncated: its loadable segment "));
    CHECK(f.reason.ends_with(", but the file has " + std::to_string(end) + " bytes"));
  }
  SUBCASE("cut inside the program headers") {
    const auto* header = reinterpret_cast<const ElfW(Ehdr)*>(bytes.data());
    write_plugin(dir, "cut", bytes.substr(0, header->e_phoff + sizeof(ElfW(Phdr)) / 2));
    CHECK(load_failure(dir.path()).reason.starts_with("is truncated: its program headers span bytes ["));
  }
  SUBCASE("cut inside the ELF header") {
    write_plugin(dir, "cut", bytes.substr(0, 40));
    CHECK(load_failure(dir.path()).reason ==
          "is 40 bytes long, shorter than an ELF header (" + std::to_string(sizeof(ElfW(Ehdr))) +
              " bytes): not a shared object");
  }
  SUBCASE("an empty file") {
    write_plugin(dir, "cut", "");
    CHECK(load_failure(dir.path()).reason.starts_with("is 0 bytes long"));
  }
}

TEST_CASE("an ELF file that is not a shared object for this machine is refused before dlopen") {
  std::string bytes = file_bytes(good_plugin());
  auto* header = reinterpret_cast<ElfW(Ehdr)*>(bytes.data());
  TempDir dir;
  SUBCASE("an executable") {
    header->e_type = ET_EXEC;
    write_plugin(dir, "exec", bytes);
    CHECK(load_failure(dir.path()).reason == "is an ELF file of type 2 (an executable), not a shared object (type 3)");
  }
  SUBCASE("another machine") {
    header->e_machine = EM_S390;
    write_plugin(dir, "s390", bytes);
    CHECK(load_failure(dir.path()).reason.starts_with("is built for ELF machine " + std::to_string(EM_S390)));
  }
}

TEST_CASE("a plugin file or directory writable by everyone is refused unless the config allows it") {
  TempDir dir;
  const fs::path copy = dir.path() / "libtileops_good.so";
  fs::copy_file(good_plugin(), copy);
  SUBCASE("the file") {
    fs::permissions(copy, fs::perms::others_write, fs::perm_options::add);
    const auto f = load_failure(dir.path());
    CHECK(f.plugin == "good");
    CHECK(f.reason.starts_with("is refused: it is writable by everyone (mode 0"));
    CHECK(f.reason.find("set allow_insecure_plugins = true") != std::string::npos);
  }
  SUBCASE("the directory") {
    fs::permissions(dir.path(), fs::perms::others_all, fs::perm_options::add);
    const auto f = load_failure(dir.path());
    CHECK(f.reason.starts_with("is refused: it lies in " + dir.path().string() + ", a directory writable by everyone"));
  }
  SUBCASE("allow_insecure_plugins loads it, with a warning") {
    fs::permissions(copy, fs::perms::others_write, fs::perm_options::add);
    PluginHost host;
    host.load({dir.path()}, {.allow_insecure = true});
    REQUIRE(host.loaded().size() == 1);
    REQUIRE(host.loaded()[0].warnings.size() == 1);
    CHECK(host.loaded()[0].warnings[0].starts_with("loaded although it is writable by everyone"));
  }
}
