// JSON that keeps its types, and bench output that streams, stops cleanly and quotes its CSV.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/run_command.hpp"
#include "support/temp_dir.hpp"

using tileops::test::run_command;

namespace {

std::string cli(const std::string& args) { return std::string(TILEOPS_CLI_PATH) + " " + args; }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("JSON is typed: parameter defaults and record indices are numbers, lists or null, flags are booleans") {
  const auto ops = run_command(cli("ops RMSNormFwdOp ReluFwdOp --json"));
  REQUIRE(ops.status == 0);
  const auto j = nlohmann::json::parse(ops.out);
  const auto& rms = j[0].at("params");
  CHECK(rms[0].at("name") == "normalized_shape");
  CHECK(rms[0].at("required") == true);
  CHECK(rms[1].at("name") == "eps");
  CHECK(rms[1].at("required") == false);
  CHECK(rms[1].at("default").is_null());
  CHECK(j[0].at("inputs")[1].at("optional") == true);
  CHECK(j[1].at("params")[0].at("default") == false);

  const auto run = run_command(cli("run RMSNormFwdOp -p normalized_shape=[64] -i x=[8,64]:float32 --json -r 1"));
  REQUIRE(run.status == 0);
  const auto indices = nlohmann::json::parse(run.out).at("last_call").at("indices");
  CHECK(indices.at("B") == nlohmann::json::array({8}));
  CHECK(indices.at("T") == "float32");
}

TEST_CASE("bench --json gives kernels in the shape run --json gives them, and null for no serving target") {
  const auto bench = run_command(cli("bench ReluFwdOp --cap 4 -r 1 --peak-gbps 1 --peak-gflops 1 --json"));
  REQUIRE(bench.status == 0);
  const auto row = nlohmann::json::parse(bench.out).at("rows")[0];
  REQUIRE(row.at("kernels").is_array());
  const auto run = run_command(cli("run ReluFwdOp -i input=[4]:float32 --json -r 1"));
  REQUIRE(run.status == 0);
  const auto run_kernels = nlohmann::json::parse(run.out).at("kernels");
  CHECK(row.at("kernels")[0].size() == run_kernels[0].size());
  CHECK(row.at("kernels")[0].at("key") == run_kernels[0].at("key"));
  CHECK((row.at("serving_target").is_string() || row.at("serving_target").is_null()));
}

TEST_CASE("bench --csv quotes every field through the CSV writer") {
  tileops::test::TempDir dir;
  const auto file = dir.path() / "rows.csv";
  const auto r = run_command(cli("bench ReluFwdOp --cap 4 -r 1 --peak-gbps 1 --peak-gflops 1 --csv " + file.string() +
                                 " > /dev/null"));
  REQUIRE(r.status == 0);
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  const auto lines = lines_of(text.str());
  REQUIRE(lines.size() >= 2);
  CHECK(lines[0] == "\"op\",\"case\",\"ms\",\"gbps\",\"gflops\",\"roofline_fraction\",\"serving_target\",\"kernels\",\"error\"");
  CHECK(lines[1].starts_with("\"ReluFwdOp\","));
}

TEST_CASE("bench: -r 0 is refused before anything runs, Ctrl-C stops after the current row and keeps the rows done") {
  tileops::test::TempDir dir;
  const auto file = dir.path() / "rows.csv";
  const auto zero = run_command(cli("bench --csv " + file.string() + " -r 0 2>&1"));
  CHECK(zero.status == 2);
  CHECK(zero.out.find("tileops bench: --repeat must be at least 1") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(file));

  // Job control on, so that the background job takes SIGINT; the signal comes once a row is done.
  const std::string out = (dir.path() / "out").string();
  const std::string err = (dir.path() / "err").string();
  const auto r = run_command("bash -c 'set -m; " + cli("bench --cap 64 -r 500 --peak-gbps 1 --peak-gflops 1 --csv " +
                                                       file.string() + " > " + out + " 2> " + err) +
                             " & pid=$!; for i in $(seq 300); do [ \"$(wc -l < " + file.string() +
                             ")\" -ge 2 ] && break; sleep 0.1; done; kill -INT $pid; wait $pid; echo $?'");
  CHECK(r.out == "130\n");
  std::ifstream table_file(out);
  std::stringstream table_text;
  table_text << table_file.rdbuf();
  const auto table = lines_of(table_text.str());
  REQUIRE(table.size() >= 4);
  CHECK(table[0].starts_with("peaks: "));
  std::ifstream err_file(err);
  std::stringstream why;
  why << err_file.rdbuf();
  CHECK(why.str().find("tileops bench: interrupted; ") != std::string::npos);
  std::ifstream in(file);
  std::stringstream csv;
  csv << in.rdbuf();
  CHECK(lines_of(csv.str()).size() == table.size() - 2);  // the table's peaks line and blank line vs the CSV header
}
