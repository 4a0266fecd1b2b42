// The manifest loader and registry: strict fields, per-entry problems (a bad entry never loads
// half-way, the other entries still load), YAML values, and lookup across files.
#include <doctest/doctest.h>

#include "manifest/manifest_loader.hpp"
#include "manifest/manifest_registry.hpp"
#include "tileops/extend/manifest.hpp"
#include "signature/plan_support.hpp"
#include "support/temp_dir.hpp"

using namespace tileops;
using manifest::load_manifest_text;

namespace {

const char* const kGood = R"yaml(
GoodFwdOp:
  family: test
  status: spec-only
  ref_api: torch.relu
  signature:
    forall: {S: Shape, T: "DType[float32]"}
    params:
      eps: {type: "float | None", default: null}
      dims: {type: "int | list[int] | None", default: [0, -1]}
      flag: {type: bool, default: true, kw_only: true}
      name: {type: "'a' | 'b'", default: 'b'}
      table: {dtype: T, shape: "[4]", optional: true, device: cpu, contiguous: true}
    inputs:
      x: {dtype: T, shape: "[*S]", mutated: flag, contiguous: true}
      w: {dtype: T, shape: "[*S]", optional: "flag"}
    outputs:
      y: {dtype: T, shape: "[*S]", nullable: "not flag", buffer: out}
  workloads:
  - {S: [2, 3], eps: 1.0e-6, dtype_cases: [{T: float32}], label: unit}
  roofline:
    flops: 0
    bytes: "2 * prod(S)"
)yaml";

}  // namespace

TEST_CASE("the loader reads every field into the OpSpec") {
  const manifest::LoadedFile f = load_manifest_text(kGood, "good.yaml");
  REQUIRE(f.problems.empty());
  REQUIRE(f.specs.size() == 1);
  const OpSpec& s = f.specs[0];
  CHECK(s.name == "GoodFwdOp");
  CHECK(s.file == "good.yaml");
  CHECK(s.ref_api == "torch.relu");
  REQUIRE(s.params.size() == 5);
  CHECK(std::holds_alternative<std::monostate>(*s.params[0].default_value));
  CHECK(value_str(*s.params[1].default_value) == "[0, -1]");
  CHECK(s.params[2].kw_only);
  CHECK(value_str(*s.params[3].default_value) == "'b'");
  CHECK(s.params[4].is_tensor);
  CHECK(s.params[4].optional);
  CHECK(s.params[4].device_cpu);
  CHECK(s.inputs[0].mutated_expr == "flag");
  CHECK(s.inputs[0].contiguous);
  CHECK(s.inputs[1].optional_expr == "flag");
  CHECK(s.outputs[0].nullable == "not flag");
  CHECK(s.outputs[0].buffer_out);
  CHECK(s.roofline.flops == "0");
  CHECK(s.roofline.bytes == "2 * prod(S)");
  REQUIRE(s.workloads.size() == 1);
  CHECK(value_str(s.workloads[0].values[1].second) == "1e-06");
  CHECK(s.workloads[0].dtype_cases[0][0].second == "float32");
}

TEST_CASE("a malformed entry is left out whole, the other entries of the file load") {
  const std::string text = std::string(kGood) + R"yaml(
BadFwdOp:
  family: test
  status: spec-only
  signature: {inputs: [x, y]}
  workloads: []
  roofline: {flops: "0"}
)yaml";
  const manifest::LoadedFile f = load_manifest_text(text, "mixed.yaml");
  REQUIRE(f.specs.size() == 1);
  CHECK(f.specs[0].name == "GoodFwdOp");
  // Every problem of the entry, each top-level field on its own.
  REQUIRE(f.problems.size() == 2);
  CHECK(f.problems[0].str() == "mixed.yaml: BadFwdOp: signature.inputs: expected a mapping");
  CHECK(f.problems[1].str() == "mixed.yaml: BadFwdOp: workloads: must have at least one row");
}

TEST_CASE("the loader rejects wrong YAML types and values field by field") {
  struct Case {
    const char* yaml;
    const char* problem;
  };
  const Case cases[] = {
      {"AFwdOp: 3\n", "t.yaml: AFwdOp: (entry): expected a mapping"},
      {"AFwdOp: {family: [a], status: spec-only}\n", "t.yaml: AFwdOp: family: expected a scalar"},
      {"AFwdOp: {family: x, status: spec-only, signature: {inputs: {x: {dtype: T, shape: \"[M]\", optional: maybe}}}}\n",
       "t.yaml: AFwdOp: workloads: required field is missing"},
      {"AFwdOp: {family: x, status: spec-only, signature: {inputs: {x: {dtype: T, shape: \"[M]\", write_only: yes}}}}\n",
       "t.yaml: AFwdOp: signature.inputs.x.write_only: expected true or false, got 'yes'"},
      {"AFwdOp: {family: x, status: spec-only, signature: {inputs: {x: {dtype: T, shape: \"[M]\", device: cuda}}}}\n",
       "t.yaml: AFwdOp: signature.inputs.x.device: the only device a tensor may declare is cpu"},
      {"AFwdOp: {family: x, status: spec-only, signature: {outputs: {y: {dtype: T, shape: \"[M]\", buffer: inout}}}}\n",
       "t.yaml: AFwdOp: signature.outputs.y.buffer: the only buffer is 'out'"},
      {"AFwdOp: {family: x, status: spec-only, signature: {params: {p: {type: int, default: [a]}}}}\n",
       "t.yaml: AFwdOp: signature.params.p.default[0]: a list value holds integers only, got 'a'"},
      {"AFwdOp: {family: x, status: spec-only, signature: {params: {p: {type: int, shape: \"[2]\"}}}}\n",
       "t.yaml: AFwdOp: signature.params.p.type: unknown field 'type'; expected one of dtype, shape, optional, device, contiguous"},
      {"AFwdOp: {family: x, status: spec-only, signature: {shape_rules: \"M > 0\"}}\n",
       "t.yaml: AFwdOp: signature.shape_rules: expected a list"},
      {"AFwdOp: {family: x, status: spec-only, signature: {shape_rules: [{message: \"M must be positive\"}]}}\n",
       "t.yaml: AFwdOp: signature.shape_rules[0].rule: required field is missing"},
      {"AFwdOp: {family: x, status: spec-only, signature: {shape_rules: [{rule: \"M > 0\", text: t}]}}\n",
       "t.yaml: AFwdOp: signature.shape_rules[0].text: unknown field 'text'; expected one of rule, message"},
      {"AFwdOp: {family: x, status: spec-only, signature: {}, workloads: [{M: 1}], roofline: {func: f}}\n",
       "t.yaml: AFwdOp: workloads[0].label: required field is missing"},
      {"AFwdOp: {family: x, status: spec-only, signature: {}, workloads: [{label: a}], roofline: {func: f}}\n",
       "t.yaml: AFwdOp: roofline.func: unknown field 'func'; expected one of flops, bytes"},
      {"AFwdOp: {family: x, status: spec-only, signature: {}, workloads: [{label: a, dtype_cases: []}], roofline: {flops: 1}}\n",
       "t.yaml: AFwdOp: workloads[0].dtype_cases: must not be empty"},
      {"AFwdOp: {family: x, status: spec-only, signature: {}, workloads: [{label: a, N: 99999999999999999999}], roofline: {flops: 1}}\n",
       "t.yaml: AFwdOp: workloads[0].N: integer 99999999999999999999 does not fit in 64 bits"},
      {"AFwdOp: {family: x, status: spec-only, signature: {types: {F: {params: {t: Bool}, match: t, cases: [{when: [true], is: \"[1]\"}]}}}}\n",
       "t.yaml: AFwdOp: signature.types.F.cases[0].when: expected a scalar (match names one subject)"},
      {"AFwdOp: {family: x, status: spec-only, signature: {}, workloads: [{label: a}], roofline: {flops: 1}, composition: {kind: composite, stages: [{name: s, optional: maybe}]}}\n",
       "t.yaml: AFwdOp: composition.stages[0].optional: expected true or false, got 'maybe'"},
      {"AFwdOp: {family: x, status: spec-only, signature: {params: {act: {type: str, decided_by: experts}}}, workloads: [{label: a}], roofline: {flops: 1}, composition: {kind: composite, stages: [{name: route, op: GemmFwdOp}]}}\n",
       "t.yaml: AFwdOp: signature.params.act.decided_by: names 'experts', which is no composition stage served by a sub-op"},
      {"[1, 2\n", "t.yaml: (file): yaml: line 2, column 1: end of sequence flow not found"},
      {"", "t.yaml: (file): yaml: a manifest file is a non-empty mapping from op name to spec"},
  };
  for (const Case& c : cases) {
    const std::string yaml = c.yaml;
    CAPTURE(yaml);
    const manifest::LoadedFile f = load_manifest_text(c.yaml, "t.yaml");
    CHECK(f.specs.empty());
    // The field under test is the first problem; the entry's other missing fields follow.
    REQUIRE_FALSE(f.problems.empty());
    CHECK(f.problems[0].str() == c.problem);
  }
}

TEST_CASE("the registry finds specs across the built-in manifests and manifest directories") {
  test::TempDir dir;
  dir.write("extra/good.yaml", kGood);
  dir.write("extra/broken.yaml", "BrokenFwdOp: {family: broken}\nHalfFwdOp: [1\n");
  dir.write("more/dup.yaml", std::string(kGood));
  dir.write("more/notes.txt", "not a manifest");
  const manifest::ManifestRegistry one({dir.path() / "extra", dir.path() / "missing"});
  CHECK(one.spec("GoodFwdOp").file == (dir.path() / "extra/good.yaml").string());
  CHECK(one.spec("GemmFwdOp").file == "manifests/gemm.yaml");
  test::expect_error<ManifestError>([&] { one.spec("NopeFwdOp"); }, "broken.yaml: (file): yaml: line 3");
  const manifest::ManifestRegistry two({dir.path() / "extra", dir.path() / "more"});
  test::expect_error<ManifestError>([&] { two.spec("GoodFwdOp"); }, "GoodFwdOp: (entry): the op is defined in both");
  const manifest::ManifestRegistry clean({dir.path() / "more"});
  test::expect_error<ValueError>([&] { clean.spec("NopeFwdOp"); },
                                 "no manifest entry is named 'NopeFwdOp'; the known ops are AddFwdOp, AlibiFwdOp");
  test::TempDir bad;
  bad.write("bad.yaml", "BadFwdOp:\n  family: x\n  stauts: spec-only\n");
  const manifest::ManifestRegistry with_bad({bad.path()});
  test::expect_error<ManifestError>([&] { with_bad.spec("BadFwdOp"); },
                                              "bad.yaml: BadFwdOp: stauts: unknown field 'stauts'");
}

TEST_CASE("an embedded manifest and a file on the path are one definition when they say the same, an error naming both when not") {
  test::TempDir dir;
  const std::string good(kGood);
  dir.write("same/good.yaml", "# a copy with a comment and its own layout\n" + good);
  std::string different = good;
  different.replace(different.find("torch.relu"), std::string("torch.relu").size(), "torch.abs");
  dir.write("different/good.yaml", different);
  const manifest::ManifestRegistry same({dir.path() / "same"}, {{"good.yaml", good}});
  CHECK(same.spec("GoodFwdOp").file == "good.yaml");
  const manifest::ManifestRegistry differs({dir.path() / "different"}, {{"good.yaml", good}});
  test::expect_error<ManifestError>(
      [&] { differs.spec("GoodFwdOp"); },
      "GoodFwdOp: (entry): the op is defined differently in " + (dir.path() / "different/good.yaml").string() +
          " and in good.yaml (embedded in the program)");
  manifest::ManifestRegistry later({});
  test::expect_error<ValueError>([&] { later.spec("GoodFwdOp"); }, "no manifest entry is named 'GoodFwdOp'");
  later.add_embedded("good.yaml", good);
  CHECK(later.spec("GoodFwdOp").name == "GoodFwdOp");
}

TEST_CASE("validate_manifests: duplicates across files, stage ops resolved against the built-ins") {
  test::TempDir dir;
  const std::string composite = R"yaml(
TwoGemmFwdOp:
  family: test
  status: spec-only
  signature:
    forall: {M: Dim, T: "DType[float32]"}
    inputs:
      x: {dtype: T, shape: "[M]"}
    outputs:
      y: {dtype: T, shape: "[M]"}
  workloads:
  - {M: 8, dtype_cases: [{T: float32}], label: unit}
  roofline:
    flops: "M"
  composition:
    kind: composite
    stages:
    - {name: first, op: GemmFwdOp}
    - {name: second, op: GoodFwdOp}
)yaml";
  const auto a = dir.write("test.yaml", std::string(kGood) + composite);
  const auto b = dir.write("test_more.yaml", kGood);
  const ManifestValidation report = validate_manifests({a, b});
  CHECK(report.files == 2);
  CHECK(report.ops == 3);
  REQUIRE(report.problems.size() == 1);
  CHECK(report.problems[0].str() == b.string() + ": GoodFwdOp: (entry): the op is already defined in " + a.string());
  const ManifestValidation builtin = validate_manifests({});
  CHECK(builtin.ops == 34);
  CHECK(builtin.problems.empty());
}
