// Manifest texts that are small on disk but huge once their aliases are expanded, or that hold
// very many entries: refused or loaded in time proportional to what the loader reads.
#include <doctest/doctest.h>

#include <string>

#include "manifest/manifest_loader.hpp"

using tileops::manifest::load_manifest_text;

namespace {

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

}  // namespace

TEST_CASE("a document whose aliases expand past 100,000 nodes is refused before any entry is read") {
  // 21 KB of text: 1,000 workload rows aliasing one row with 1,000 dtype cases took seconds and
  // a million case objects to reject; 9 levels of tenfold aliases would stand for 10^9 nodes.
  const std::string rows = "  workloads:\n  - &r {M: 4, dtype_cases: [" + repeat("{T: float16}, ", 999) +
                           "{T: float16}], label: unit}\n" + repeat("  - *r\n", 999);
  const std::string spec = "AliasFwdOp:\n  family: test\n  status: spec-only\n" + rows;
  const auto loaded = load_manifest_text(spec, "alias.yaml");
  CHECK(loaded.specs.empty());
  REQUIRE(loaded.problems.size() == 1);
  CHECK(loaded.problems[0].op == "(file)");
  CHECK(loaded.problems[0].reason.find("more than 100000 nodes") != std::string::npos);

  std::string laughs = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    laughs += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" +
              repeat("*a" + std::to_string(i - 1) + ", ", 9) + "*a" + std::to_string(i - 1) + "]\n";
  }
  const auto bomb = load_manifest_text(laughs, "laughs.yaml");
  REQUIRE(bomb.problems.size() == 1);
  CHECK(bomb.problems[0].reason.find("more than 100000 nodes") != std::string::npos);
}

TEST_CASE("a document with 40,000 entries is read in linear time, each entry judged once") {
  std::string text;
  for (int i = 0; i < 40000; ++i) text += "Op" + std::to_string(i) + "FwdOp: 1\n";
  text += "Op7FwdOp: 2\n";
  const auto loaded = load_manifest_text(text, "many.yaml");
  CHECK(loaded.specs.empty());
  REQUIRE(loaded.problems.size() == 40001);
  CHECK(loaded.problems.back().op == "Op7FwdOp");
  CHECK(loaded.problems.back().reason == "the op is defined twice in this file");
}
