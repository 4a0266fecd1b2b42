// `tileops validate`: passes on the built-in manifests and manifests/, fails on each broken
// manifest with its one line `file: Op: field: reason`, and never crashes.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "support/run_command.hpp"
#include "support/temp_dir.hpp"

using tileops::test::run_command;

namespace {

const std::string kCli = TILEOPS_CLI_PATH;
const std::string kBroken = std::string(TILEOPS_TEST_DATA_DIR) + "/manifests_broken";

struct Case {
  const char* file;
  const char* line;  // after "<path>: "
};

}  // namespace

TEST_CASE("tileops validate passes on the built-in manifests and on manifests/") {
  const auto builtin = run_command(kCli + " validate 2>&1");
  CHECK(builtin.status == 0);
  CHECK(builtin.out.find("0 problem(s)") != std::string::npos);
  const auto dir = run_command(kCli + " validate " + std::string(TILEOPS_SOURCE_DIR) + "/manifests 2>&1");
  CHECK(dir.status == 0);
  CHECK(dir.out.find("34 op(s) in 12 file(s), 0 problem(s)") != std::string::npos);
}

TEST_CASE("tileops validate fails on each broken manifest with the right line") {
  const Case cases[] = {
      {"broken_yaml_syntax.yaml", "(file): yaml: line 7, column 1: end of map flow not found"},
      {"broken_unknown_field.yaml", "BrokenUnknownFieldFwdOp: signature.inputs.x.layout: unknown field 'layout'"},
      {"broken_bad_expression.yaml",
       "BrokenBadExpressionFwdOp: signature.shape_rules[0]: 'x.shape == (M,)': 'x.shape': reading a tensor's attributes is not in the "
       "expression language"},
      {"broken_unsolvable_index.yaml",
       "BrokenUnsolvableIndexFwdOp: signature.forall.N: index 'N' cannot be solved on every call: output 'y' reads it, but no input determines it"},
      {"broken_family_gap.yaml",
       "BrokenFamilyGapFwdOp: signature.inputs.a.shape: the type family cases of Mat[trans, M, K] have a gap: no case applies when trans = true"},
      {"broken_family_overlap.yaml", "BrokenFamilyOverlapFwdOp: signature.types.Mat.cases[1].when: overlaps cases[0]: both apply when t = false"},
      {"broken_let_cycle.yaml", "BrokenLetCycleFwdOp: signature.let.half: let entries form a cycle: half -> twice -> half"},
      {"broken_alias.yaml", "BrokenAliasFwdOp: signature.outputs.y.alias: input 'x' is never written (it declares no mutated)"},
      {"broken_workload_label.yaml",
       "BrokenWorkloadLabelFwdOp: workloads[0].label: 'llama-8b-prefill-with-weight' must be 1 to 24 characters of [A-Za-z0-9._-]"},
      {"broken_workload_row.yaml", "BrokenWorkloadRowFwdOp: workloads[0].K: gives index 'K', which the row's branch does not use"},
      {"broken_composition.yaml", "BrokenCompositionFwdOp: composition.stages[0].op: 'NoSuchFwdOp' is not an op of any manifest"},
      {"misplaced.yaml", "MisplacedFwdOp: family: an op of family 'broken' belongs in broken.yaml or broken_<shard>.yaml"},
  };
  for (const Case& c : cases) {
    const std::string path = kBroken + "/" + c.file;
    CAPTURE(path);
    const auto r = run_command(kCli + " validate " + path);
    CAPTURE(r.out);
    CHECK(r.status == 1);
    CHECK(r.out.rfind(path + ": " + c.line, 0) == 0);
    // The one problem, then the summary.
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 2);
    CHECK(r.out.ends_with(" in 1 file(s), 1 problem(s)\n"));
  }
  const auto all = run_command(kCli + " validate " + kBroken + " 2>/dev/null");
  CHECK(all.status == 1);
  for (const Case& c : cases) CHECK(all.out.find(kBroken + "/" + c.file + ": " + c.line) != std::string::npos);
}

TEST_CASE("tileops validate reports a missing path and answers --help") {
  const auto missing = run_command(kCli + " validate /no/such/manifests.yaml 2>/dev/null");
  CHECK(missing.status == 1);
  CHECK(missing.out ==
        "/no/such/manifests.yaml: (file): (file): does not exist\ntileops validate: 0 op(s) in 0 file(s), 1 problem(s)\n");
  const auto help = run_command(kCli + " validate --help");
  CHECK(help.status == 0);
  CHECK(help.out.find("usage: tileops validate [PATH...]") != std::string::npos);
}

TEST_CASE("tileops validate reports every problem of an entry in one run, and its summary on stdout") {
  tileops::test::TempDir dir;
  const auto file = dir.write("test.yaml", "BadFwdOp:\n  family: test\n  stauts: spec-only\n  colour: blue\n");
  const auto r = run_command(kCli + " validate " + file.string() + " 2>/dev/null");
  CHECK(r.status == 1);
  const std::string where = file.string() + ": BadFwdOp: ";
  for (const std::string problem : {"stauts: unknown field 'stauts'", "colour: unknown field 'colour'",
                                    "status: required field is missing", "signature: required field is missing",
                                    "workloads: required field is missing", "roofline: required field is missing"}) {
    CHECK(r.out.find(where + problem) != std::string::npos);
  }
  CHECK(r.out.ends_with("tileops validate: 0 op(s) in 1 file(s), 6 problem(s)\n"));
}
