// The tileops program's exit statuses and its errors under --json: what the command line got
// wrong (an unknown or missing parameter, a --config file that does not exist, a bad
// --log-level) exits 2; a call that fails exits 1; with --json, every error is also a JSON object
// {"error": {"kind", "message"}} on stdout.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "support/run_command.hpp"

using tileops::test::run_command;

namespace {

tileops::test::CommandResult tileops_cli(const std::string& args) {
  return run_command(std::string(TILEOPS_CLI_PATH) + " " + args + " 2>/dev/null");
}

}  // namespace

TEST_CASE("usage errors exit 2: an unknown or missing parameter, a missing --config file, a bad --log-level") {
  CHECK(tileops_cli("run RMSNormFwdOp -p foo=1 -i x=[4,64]:float32").status == 2);
  CHECK(tileops_cli("run RMSNormFwdOp -i x=[4,64]:float32").status == 2);
  CHECK(tileops_cli("info --config /nonexistent/tileops.conf").status == 2);
  CHECK(tileops_cli("info --log-level loud").status == 2);
  CHECK(tileops_cli("plugins --log-level loud").status == 2);
}

TEST_CASE("a call that fails exits 1") {
  CHECK(tileops_cli("run RMSNormFwdOp -p normalized_shape=[64] -i x=[4,63]:float32").status == 1);
}

TEST_CASE("with --json an error is a JSON object on stdout naming its kind, and the exit status stays") {
  const auto call = tileops_cli("run RMSNormFwdOp -p normalized_shape=[64] -i x=[4,63]:float32 --json");
  CHECK(call.status == 1);
  const auto j = nlohmann::json::parse(call.out);
  CHECK(j.at("error").at("kind") == "ValueError");
  CHECK(j.at("error").at("message").get<std::string>().find(
            "tileops run: RMSNormFwdOp: input 'x' shape [4, 63] does not match") == 0);

  const auto missing = tileops_cli("run RMSNormFwdOp -i x=[4,64]:float32 --json");
  CHECK(missing.status == 2);
  const auto m = nlohmann::json::parse(missing.out);
  CHECK(m.at("error").at("kind") == "TypeError");
  CHECK(m.at("error").at("message").get<std::string>().find("missing required parameter 'normalized_shape'") !=
        std::string::npos);

  const auto config = tileops_cli("info --config /nonexistent/tileops.conf --json");
  CHECK(config.status == 2);
  CHECK(nlohmann::json::parse(config.out).at("error").at("kind") == "ConfigError");

  const auto usage = tileops_cli("run RMSNormFwdOp --repeat 0 -p normalized_shape=[64] -i x=[4,64]:float32 --json");
  CHECK(usage.status == 2);
  CHECK(nlohmann::json::parse(usage.out).at("error").at("kind") == "UsageError");
}

TEST_CASE("the demos and the op generator print their usage on stdout for --help and exit 0") {
  for (const std::string program : {"embed_llama_block", "embed_llama_layer", "tileops-opgen"}) {
    CAPTURE(program);
    const auto r = run_command(std::string(TILEOPS_BIN_DIR) + "/" + program + " --help 2>/dev/null");
    CHECK(r.status == 0);
    CHECK(r.out.find("usage: " + program) != std::string::npos);
    CHECK(run_command(std::string(TILEOPS_BIN_DIR) + "/" + program + " --colour >/dev/null 2>&1").status == 2);
  }
}

TEST_CASE("a parameter or input given twice, and a non-finite number, are usage errors") {
  const auto twice = run_command(std::string(TILEOPS_CLI_PATH) +
                                 " run RMSNormFwdOp -p normalized_shape=[64] -i x=[4,64] -i x=[8,64] 2>&1");
  CHECK(twice.status == 2);
  CHECK(twice.out.find("--input x is given twice; give each input once") != std::string::npos);
  const auto param = run_command(std::string(TILEOPS_CLI_PATH) +
                                 " run RMSNormFwdOp -p normalized_shape=[64] -p normalized_shape=[32] -i x=[4,64] 2>&1");
  CHECK(param.status == 2);
  CHECK(param.out.find("--param normalized_shape is given twice") != std::string::npos);
  const auto inf = run_command(std::string(TILEOPS_CLI_PATH) +
                               " run RMSNormFwdOp -p normalized_shape=[64] -p eps=inf -i x=[4,64] 2>&1");
  CHECK(inf.status == 2);
  CHECK(inf.out.find("parameter 'eps' of type") != std::string::npos);
  CHECK(inf.out.find("cannot take the value 'inf'") != std::string::npos);
}
