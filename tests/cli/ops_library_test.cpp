// tileops run, bench and ops take an application's ops from a shared library built with
// tileops_add_ops (--ops-library): its manifest and catalog entries come with the library.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "support/run_command.hpp"

using tileops::test::run_command;

namespace {

tileops::test::CommandResult tileops_cli(const std::string& args) {
  return run_command(std::string(TILEOPS_CLI_PATH) + " " + args + " 2>&1");
}

const std::string kLibrary = std::string("--ops-library ") + TILEOPS_TEST_OPS_LIBRARY;

}  // namespace

TEST_CASE("tileops run checks an op from --ops-library against its reference kernel, with no manifest path") {
  const auto r = tileops_cli("run SoftcapFwdOp " + kLibrary + " -p cap=5 -i x=[4,64]:float32 --check -r 1 --json");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("check").at("ok") == true);
  CHECK(j.at("kernels")[0].at("key") == "softcap_reference");
}

TEST_CASE("tileops ops lists an --ops-library op beside the in-tree ones, and without the library it is unknown") {
  const auto listed = tileops_cli("ops SoftcapFwdOp " + kLibrary + " --json");
  REQUIRE(listed.status == 0);
  CHECK(listed.out.find("\"SoftcapFwdOp\"") != std::string::npos);
  const auto unknown = tileops_cli("run SoftcapFwdOp -i x=[4]:float32");
  CHECK(unknown.status != 0);
  CHECK(unknown.out.find("unknown op 'SoftcapFwdOp'") != std::string::npos);
}

TEST_CASE("an --ops-library that cannot be loaded is a usage error naming the file") {
  const auto r = tileops_cli("ops --ops-library /nonexistent/libops.so");
  CHECK(r.status == 2);
  CHECK(r.out.find("--ops-library /nonexistent/libops.so: cannot be loaded: ") != std::string::npos);
}
