// The nccl plugin loads without NCCL or RCCL: tileops info says where it looked, and the
// collective ops on that device type are refused with that reason.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "support/run_command.hpp"

using tileops::test::run_command;

namespace {

nlohmann::json provider_of(const nlohmann::json& info, const std::string& device_type) {
  for (const auto& c : info.at("collectives")) {
    if (c.at("device_type") == device_type) return c;
  }
  FAIL("no collective provider for " << device_type);
  return {};
}

}  // namespace

TEST_CASE("tileops info lists the nccl plugin's providers, and a library that cannot be loaded is named with the reason") {
  const auto r = run_command("TILEOPS_NCCL_LIBRARY=/nonexistent/libnccl.so.2 TILEOPS_RCCL_LIBRARY= " +
                             tileops::test::tileops_cli_path() + " info --json");
  REQUIRE(r.status == 0);
  const auto info = nlohmann::json::parse(r.out);
  const nlohmann::json nccl = provider_of(info, "cuda");
  CHECK(nccl.at("provider") == "nccl");
  CHECK(nccl.at("available") == false);
  CHECK(nccl.at("description").get<std::string>().starts_with(
      "cannot load /nonexistent/libnccl.so.2 (named by TILEOPS_NCCL_LIBRARY)"));
  const nlohmann::json rccl = provider_of(info, "hip");
  CHECK(rccl.at("provider") == "rccl");
  if (rccl.at("available") == false) {
    CHECK(rccl.at("description").get<std::string>().find("cannot load librccl.so.1: the loader searched LD_LIBRARY_PATH") !=
          std::string::npos);
  }
}

TEST_CASE("tileops info refuses an over-long library path in the environment, naming the variable") {
  const auto r = run_command("TILEOPS_NCCL_LIBRARY=$(printf '/x%.0s' $(seq 1 3000)) " + tileops::test::tileops_cli_path() +
                             " info --json");
  REQUIRE(r.status == 0);
  CHECK(provider_of(nlohmann::json::parse(r.out), "cuda").at("description").get<std::string>().starts_with(
      "TILEOPS_NCCL_LIBRARY is 6000 bytes long; expected a path of at most 4096 bytes"));
}
