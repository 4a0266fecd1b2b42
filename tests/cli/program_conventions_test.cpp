// What users expect of a command-line program: --version, help CMD, global options on either
// side of the command, one prefix on every message, refused stray arguments, --strict.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "plugin_host/corpus.hpp"
#include "support/run_command.hpp"
#include "support/temp_dir.hpp"
#include "tileops/version.hpp"

using tileops::test::run_command;

namespace {

std::string cli(const std::string& args) { return std::string(TILEOPS_CLI_PATH) + " " + args; }

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("tileops --version prints the library version") {
  const auto r = run_command(cli("--version"));
  CHECK(r.status == 0);
  CHECK(r.out == std::string("tileops ") + TILEOPS_VERSION_STRING + "\n");
}

TEST_CASE("tileops help CMD prints the command's help, help of an unknown command is a usage error") {
  const auto r = run_command(cli("help bench"));
  CHECK(r.status == 0);
  CHECK(r.out.starts_with("usage: tileops bench"));
  CHECK(r.out.find("--csv") != std::string::npos);
  const auto unknown = run_command(cli("help frobnicate 2>&1"));
  CHECK(unknown.status == 2);
  CHECK(unknown.out.find("unknown command 'frobnicate'") != std::string::npos);
}

TEST_CASE("global options are accepted before the command as well as after it") {
  tileops::test::TempDir dir;
  const auto conf = dir.write("t.conf", "default_target = builtin\n");
  for (const std::string& args : {"--config " + conf.string() + " info --json", "--config=" + conf.string() + " info --json",
                                  "info --json --config " + conf.string()}) {
    CAPTURE(args);
    const auto r = run_command(cli(args));
    REQUIRE(r.status == 0);
    CHECK(nlohmann::json::parse(r.out).at("default_target") == "builtin");
  }
  const auto target = run_command(cli("--default-target builtin --log-level error targets --json"));
  REQUIRE(target.status == 0);
  CHECK(nlohmann::json::parse(target.out).at("default_target") == "builtin");
}

TEST_CASE("every message of a command is prefixed with 'tileops <command>:'") {
  const auto param = run_command(cli("run RMSNormFwdOp -p colour=1 2>&1"));
  CHECK(param.status == 2);
  CHECK(param.out.starts_with("tileops run: RMSNormFwdOp has no parameter 'colour'"));
  const auto input = run_command(cli("run RMSNormFwdOp -p normalized_shape=[4] -i x=oops 2>&1"));
  CHECK(input.status == 2);
  CHECK(input.out.starts_with("tileops run: --input x:"));
  const auto option = run_command(cli("info --colour 2>&1"));
  CHECK(option.out.starts_with("tileops info: "));
}

TEST_CASE("validate of a missing path names the path once") {
  const auto r = run_command(cli("validate /nonexistent/manifests.yaml 2>&1"));
  CHECK(r.status != 0);
  CHECK(count(r.out, "/nonexistent/manifests.yaml") == 1);
}

TEST_CASE("a command that takes no positional argument refuses one") {
  const auto r = run_command(cli("targets EXTRA 2>&1"));
  CHECK(r.status == 2);
  CHECK(r.out.starts_with("tileops targets: too many arguments"));
}

TEST_CASE("plugins --strict exits 1 when a plugin failed to load, without it the listing exits 0") {
  const std::string env = "TILEOPS_PLUGIN_PATH=" + tileops::test::corpus("garbage").string() + " ";
  CHECK(run_command(env + cli("plugins 2>/dev/null")).status == 0);
  const auto strict = run_command(env + cli("plugins --strict 2>&1 >/dev/null"));
  CHECK(strict.status == 1);
  CHECK(strict.out.find("tileops plugins: 1 plugin(s) failed to load (--strict)") != std::string::npos);
  CHECK(run_command(cli("plugins --strict >/dev/null 2>&1")).status == 0);
}

TEST_CASE("plugins --strict exits 1 when a plugin loaded with an ambiguity warning") {
  const std::string env = "TILEOPS_PLUGIN_PATH=" + tileops::test::corpus("ambiguous").string() + " ";
  CHECK(run_command(env + cli("plugins >/dev/null 2>&1")).status == 0);
  const auto strict = run_command(env + cli("plugins --strict 2>&1 >/dev/null"));
  CHECK(strict.status == 1);
  CHECK(strict.out.find("tileops plugins: 1 plugin(s) loaded with warnings (--strict)") != std::string::npos);
}
