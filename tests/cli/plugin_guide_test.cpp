// The plugin guide's example (small_rows, built from the guide's own code block) loads beside
// the in-tree plugins and takes exactly the calls the guide says it takes.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugin_host/corpus.hpp"
#include "support/run_command.hpp"

using tileops::test::corpus;
using tileops::test::run_command;

namespace {

tileops::test::CommandResult run_beside_in_tree(const std::string& args) {
  return run_command("TILEOPS_PLUGIN_PATH=" + corpus("guide").string() + " " + TILEOPS_CLI_PATH + " " + args +
                     " 2>/dev/null");
}

// The keys of the kernels that served `tileops run --json`'s call, ','-joined.
std::string served_keys(int cols) {
  const std::string n = std::to_string(cols);
  const auto r = run_beside_in_tree("run RMSNormFwdOp -p normalized_shape=[" + n + "] -i x=[4," + n +
                                    "]:float32 -i weight=[" + n + "]:float32 --check -r 1 --json");
  REQUIRE(r.status == 0);
  const nlohmann::json report = nlohmann::json::parse(r.out);
  std::string keys;
  for (const auto& k : report.at("kernels")) keys += (keys.empty() ? "" : ",") + k.at("key").get<std::string>();
  return keys;
}

}  // namespace

TEST_CASE("the plugin guide's small_rows example loads beside the in-tree plugins with no warning that fails --strict") {
  const auto r = run_beside_in_tree("plugins --strict --json");
  CHECK(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  std::vector<std::string> loaded;
  for (const auto& p : j.at("plugins")) loaded.push_back(p.at("name"));
  CHECK(std::find(loaded.begin(), loaded.end(), "small_rows") != loaded.end());
  CHECK(std::find(loaded.begin(), loaded.end(), "cpu") != loaded.end());
  CHECK(j.at("load_failures").empty());
}

TEST_CASE("the plugin guide's small_rows example serves float32 rows up to 8192 elements, cpu_rms_norm the others") {
  CHECK(served_keys(64) == "small_row_rms_norm");
  CHECK(served_keys(8192) == "small_row_rms_norm");
  CHECK(served_keys(8200) == "cpu_rms_norm");
}
