// Files and paths from outside: config and manifest files are read only when
// they are regular files, bounded in size, never blocking on a FIFO or a device; every path
// problem is reported naming the path and what it is.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "manifest/manifest_registry.hpp"
#include "support/temp_dir.hpp"
#include "text_file.hpp"
#include "tileops/config.hpp"
#include "tileops/errors.hpp"

using namespace tileops;
namespace fs = std::filesystem;

namespace {

// A directory holding every kind of path that is not a readable regular file, beside one good
// file; each is named `<kind>.<extension>`.
struct HostilePaths {
  test::TempDir dir;
  explicit HostilePaths(const std::string& extension) {
    const fs::path d = dir.path();
    fs::create_symlink("loop." + extension, d / ("loop." + extension));
    fs::create_symlink("/dev/zero", d / ("zero." + extension));
    fs::create_symlink(d / "nowhere", d / ("dangling." + extension));
    fs::create_symlink("/proc/self/mem", d / ("mem." + extension));  // a regular file whose read fails
    REQUIRE(mkfifo((d / ("fifo." + extension)).c_str(), 0600) == 0);
    fs::create_directory(d / ("dir." + extension));
  }
  fs::path operator/(const std::string& name) const { return dir.path() / name; }
};

// The source tree's softmax manifest with its op renamed, so that it adds an op of its own.
std::string copied_softmax_manifest() {
  std::ifstream in(std::string(TILEOPS_SOURCE_DIR) + "/manifests/softmax.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = text.find("SoftmaxFwdOp:");
  REQUIRE(at != std::string::npos);
  return text.replace(at, 0, "Copied");
}

bool has_problem(const std::vector<manifest::LoadedFile>& files, const std::string& file, const std::string& words) {
  for (const auto& f : files) {
    for (const auto& p : f.problems) {
      if (p.file.find(file) != std::string::npos && p.op == "(file)" && p.reason.find(words) != std::string::npos) return true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("read_text_file reads a regular file whole and names what every other path is") {
  HostilePaths paths("conf");
  const fs::path good = paths.dir.write("good.conf", "log_level = info\n");
  CHECK(read_text_file(good).problem.empty());
  CHECK(read_text_file(good).text == "log_level = info\n");
  CHECK(read_text_file(paths / "loop.conf").problem == "cannot be opened: Too many levels of symbolic links");
  CHECK(read_text_file(paths / "zero.conf").problem == "is a character device, not a regular file");
  CHECK(read_text_file(paths / "fifo.conf").problem == "is a FIFO, not a regular file");  // returns at once
  CHECK(read_text_file(paths / "dir.conf").problem == "is a directory, not a regular file");
  CHECK(read_text_file(paths / "dangling.conf").problem ==
        "cannot be opened: it is a symbolic link to a missing file");
  CHECK(read_text_file(paths / "mem.conf").problem.rfind("cannot be read: ", 0) == 0);
  CHECK(read_text_file("/" + std::string(5000, 'a')).problem == "cannot be opened: File name too long");
}

TEST_CASE("read_text_file reads at most the limit plus one byte") {
  test::TempDir dir;
  const fs::path file = dir.write("big.conf", std::string(100, 'x'));
  CHECK(read_text_file(file, 100).problem.empty());
  CHECK(read_text_file(file, 99).problem == "is larger than the 99 bytes limit");
  const fs::path huge = dir.path() / "huge.conf";
  {
    std::ofstream out(huge);
    out.seekp(static_cast<std::streamoff>(kMaxTextFileBytes));  // sparse: 16 MiB + 1 byte
    out.put('x');
  }
  CHECK(read_text_file(huge).problem == "is larger than the 16 MiB limit");
}

TEST_CASE("an unreadable file is a problem naming the reason") {
  test::TempDir dir;
  const fs::path file = dir.write("secret.conf", "log_level = info\n");
  fs::permissions(file, fs::perms::none);
  const TextFile read = read_text_file(file);
  // The superuser reads files whatever their permissions; everyone else is refused.
  if (geteuid() == 0) {
    CHECK(read.problem.empty());
  } else {
    CHECK(read.problem == "cannot be opened: Permission denied");
  }
}

TEST_CASE("path_for_message shortens very long paths and says how long they were") {
  CHECK(path_for_message("/etc/tileops.conf") == "/etc/tileops.conf");
  const std::string shown = path_for_message("/" + std::string(5000, 'a'));
  CHECK(shown.size() < 200);
  CHECK(shown.find("(5001 characters)") != std::string::npos);
}

TEST_CASE("TILEOPS_CONFIG naming a symlink loop, a 5000-character name, a directory, a FIFO or /dev/zero is a ConfigError") {
  HostilePaths paths("conf");
  const auto load_with = [](const std::string& value) {
    test::ScopedEnv cfg("TILEOPS_CONFIG", value);
    return load_config();
  };
  CHECK_THROWS_WITH_AS(load_with((paths / "loop.conf").string()),
                       doctest::Contains("cannot be examined: Too many levels of symbolic links"), ConfigError);
  CHECK_THROWS_WITH_AS(load_with("/" + std::string(5000, 'a')),
                       doctest::Contains("cannot be examined: File name too long"), ConfigError);
  CHECK_THROWS_WITH_AS(load_with(paths.dir.path().string()),
                       doctest::Contains("a directory; expected the path of a regular config file"), ConfigError);
  CHECK_THROWS_WITH_AS(load_with((paths / "fifo.conf").string()), doctest::Contains("a FIFO; expected"), ConfigError);
  CHECK_THROWS_WITH_AS(load_with("/dev/zero"), doctest::Contains("'/dev/zero', a character device"), ConfigError);
  CHECK_THROWS_WITH_AS(load_with((paths / "dangling.conf").string()), doctest::Contains("which does not exist"),
                       ConfigError);
}

TEST_CASE("parse_config_file rejects a non-regular or oversized file without reading it unbounded") {
  HostilePaths paths("conf");
  CHECK_THROWS_WITH_AS(parse_config_file("/dev/zero"),
                       doctest::Contains("config file /dev/zero: is a character device, not a regular file"),
                       ConfigError);
  CHECK_THROWS_WITH_AS(parse_config_file(paths / "fifo.conf"), doctest::Contains("is a FIFO"), ConfigError);
  const fs::path huge = paths.dir.path() / "huge.conf";
  {
    std::ofstream out(huge);
    out.seekp(static_cast<std::streamoff>(kMaxTextFileBytes));
    out.put('\n');
  }
  CHECK_THROWS_WITH_AS(parse_config_file(huge), doctest::Contains("is larger than the 16 MiB limit"), ConfigError);
}

TEST_CASE("a config directory candidate that is not a regular file is reported, not passed over") {
  test::TempDir dir;
  fs::create_directories(dir.path() / "home" / "tileops" / "tileops.conf");  // a directory by mistake
  test::ScopedEnv cfg("TILEOPS_CONFIG", nullptr);
  test::ScopedEnv xdg("XDG_CONFIG_HOME", (dir.path() / "home").string());
  test::ScopedEnv dirs("XDG_CONFIG_DIRS", (dir.path() / "none").string());
  CHECK_THROWS_WITH_AS(find_config_file(), doctest::Contains("tileops.conf is a directory, not a regular file"),
                       ConfigError);
}

TEST_CASE("relative XDG directories are ignored, as the XDG base directory rules say") {
  test::TempDir dir;
  test::ScopedEnv cfg("TILEOPS_CONFIG", nullptr);
  test::ScopedEnv xdg("XDG_CONFIG_HOME", "relative/config");
  test::ScopedEnv home("HOME", (dir.path() / "home").string());
  test::ScopedEnv dirs("XDG_CONFIG_DIRS", "also/relative:" + (dir.path() / "sys").string());
  const fs::path sys = dir.write("sys/tileops/tileops.conf", "log_level = info\n");
  CHECK(find_config_file() == sys);
}

TEST_CASE("a manifest directory holding a loop, a FIFO, /dev/zero, a directory and unreadable files loads the rest") {
  HostilePaths paths("yaml");
  paths.dir.write("good.yaml", copied_softmax_manifest());
  const std::vector<manifest::LoadedFile> files = manifest::load_manifest_directory(paths.dir.path());
  CHECK(files.size() == 7);  // every *.yaml entry, each loaded or reported
  CHECK(has_problem(files, "loop.yaml", "Too many levels of symbolic links"));
  CHECK(has_problem(files, "zero.yaml", "is a character device, not a regular file"));
  CHECK(has_problem(files, "fifo.yaml", "is a FIFO, not a regular file"));
  CHECK(has_problem(files, "dir.yaml", "is a directory, not a regular file"));
  CHECK(has_problem(files, "dangling.yaml", "symbolic link to a missing file"));
  CHECK(has_problem(files, "mem.yaml", "cannot be read"));
  for (const auto& f : files) {
    if (f.file.find("good.yaml") == std::string::npos) continue;
    CHECK(f.problems.empty());
    REQUIRE(f.specs.size() == 1);
    CHECK(f.specs[0].name == "CopiedSoftmaxFwdOp");
  }
}

TEST_CASE("a manifest_path entry that is not a directory, or cannot be listed, is one problem") {
  HostilePaths paths("yaml");
  CHECK(has_problem(manifest::load_manifest_directory(paths / "zero.yaml"), "zero.yaml",
                    "is a character device, not a directory of manifest files"));
  CHECK(has_problem(manifest::load_manifest_directory(paths / "loop.yaml"), "loop.yaml",
                    "cannot be examined: Too many levels of symbolic links"));
  CHECK(manifest::load_manifest_directory(paths / "absent").empty());  // missing directories are skipped
  // The registry keeps going: the good file beside the hostile entries and the built-in ops load.
  paths.dir.write("good.yaml", copied_softmax_manifest());
  const manifest::ManifestRegistry registry({paths.dir.path(), paths / "zero.yaml"});
  CHECK(registry.spec("RMSNormFwdOp").name == "RMSNormFwdOp");
  CHECK(registry.spec("CopiedSoftmaxFwdOp").name == "CopiedSoftmaxFwdOp");
}
