// Static checks when a plan is compiled: each malformed form of a valid base
// spec is rejected with a ManifestError naming file, op, field and reason.
#include <doctest/doctest.h>

#include "tileops/errors.hpp"
#include "signature/plan_support.hpp"

using namespace tileops;

namespace {

const std::string kBase = R"yaml(
BaseFwdOp:
  family: test
  status: spec-only
  signature:
    forall: {M: Dim, N: Dim, T: "DType[float16 | float32]"}
    params:
      scale: {type: float, default: 1.0}
    inputs:
      x: {dtype: T, shape: "[M, N]"}
    outputs:
      y: {dtype: T, shape: "[M, N]"}
    shape_rules:
    - "scale > 0"
  workloads:
  - {M: 4, N: 8, dtype_cases: [{T: float16}], label: unit}
  roofline:
    flops: "M * N"
)yaml";

// `base` with the first occurrence of each `from` replaced by `to`.
std::string mutate(std::string base, const std::vector<std::pair<std::string, std::string>>& edits) {
  for (const auto& [from, to] : edits) {
    const auto at = base.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from);
    base.replace(at, from.size(), to);
  }
  return base;
}

struct Case {
  const char* what;
  std::vector<std::pair<std::string, std::string>> edits;
  const char* expected;  // "field: reason" (after "<yaml>: BaseFwdOp: ")
};

}  // namespace

TEST_CASE("the base spec compiles") { CHECK_NOTHROW(SignaturePlan::from_yaml(kBase, "BaseFwdOp")); }

TEST_CASE("malformed specs are rejected naming file, op, field and reason") {
  const Case cases[] = {
      {"unknown top-level field", {{"  status: spec-only", "  status: spec-only\n  colour: red"}},
       "colour: unknown field 'colour'; expected one of family, status, ref_api, signature, workloads, roofline, composition"},
      {"unknown tensor field", {{"x: {dtype: T,", "x: {strides: 1, dtype: T,"}},
       "signature.inputs.x.strides: unknown field 'strides'; expected one of dtype, shape, optional"},
      {"missing field", {{"  roofline:\n    flops: \"M * N\"", ""}}, "roofline: required field is missing"},
      {"bad status", {{"spec-only", "done"}}, "status: must be implemented or spec-only, not 'done'"},
      {"bad op name", {{"BaseFwdOp:", "base_op:"}}, "(entry): an op name is PascalCase and ends in FwdOp or BwdOp"},
      {"bad family", {{"family: test", "family: Test-Ops"}}, "family: 'Test-Ops' is not a lower_snake_case module name"},
      {"bad ref_api", {{"  status: spec-only", "  status: spec-only\n  ref_api: torch..add"}},
       "ref_api: 'torch..add' is not a fully qualified name"},
      {"syntax error", {{"shape: \"[M, N]\"}\n    outputs", "shape: \"[M +]\"}\n    outputs"}},
       "signature.inputs.x.shape: '[M +]': column 5: unexpected ']'"},
      {"unknown name", {{"y: {dtype: T, shape: \"[M, N]\"}", "y: {dtype: T, shape: \"[M, Q]\"}"}},
       "signature.outputs.y.shape: 'Q': unknown name 'Q'"},
      {"unknown primitive", {{"\"scale > 0\"", "\"isinstance(scale, float)\""}},
       "signature.shape_rules[0]: 'isinstance(scale, float)': unknown primitive 'isinstance'; the built-in primitives are bytes, present, abs"},
      {"rule not Bool", {{"\"scale > 0\"", "\"M + 1\""}}, "signature.shape_rules[0]: 'M + 1' must be Bool, not Int"},
      {"dtype not DType", {{"x: {dtype: T,", "x: {dtype: M,"}}, "signature.inputs.x.dtype: 'M' must be a DType, not Int"},
      {"shape not a shape", {{"y: {dtype: T, shape: \"[M, N]\"}", "y: {dtype: T, shape: \"M\"}"}},
       "signature.outputs.y.shape: 'M': a shape is a list such as [M, K] or a type family application"},
      {"axis not Int", {{"y: {dtype: T, shape: \"[M, N]\"}", "y: {dtype: T, shape: \"[M, T]\"}"}},
       "signature.outputs.y.shape: '[M, T]': axis 'T' is DType, not Int"},
      {"unguarded .value", {{"scale: {type: float, default: 1.0}", "scale: {type: \"float | None\", default: null}"},
                            {"\"scale > 0\"", "\"scale.value > 0\""}},
       "signature.shape_rules[0]: 'scale.value > 0': 'scale.value': '.value' is read where present(scale) is not known to hold"},
      {"unsolvable index", {{"forall: {M: Dim,", "forall: {K: Dim, M: Dim,"}, {"y: {dtype: T, shape: \"[M, N]\"}", "y: {dtype: T, shape: \"[M, N, K]\"}"}},
       "signature.forall.K: index 'K' cannot be solved on every call: output 'y' reads it, but no input determines it"},
      {"two unknowns in one axis", {{"x: {dtype: T, shape: \"[M, N]\"}", "x: {dtype: T, shape: \"[M + N]\"}"}},
       "signature.inputs.x.shape: '[M + N]' cannot be resolved on every call"},
      {"two unknown stars", {{"forall: {M: Dim, N: Dim,", "forall: {M: Shape, N: Shape,"},
                             {"x: {dtype: T, shape: \"[M, N]\"}", "x: {dtype: T, shape: \"[*M, *N]\"}"},
                             {"y: {dtype: T, shape: \"[M, N]\"}", "y: {dtype: T, shape: \"[*M, *N]\"}"},
                             {"{M: 4, N: 8,", "{M: [4], N: [8],"}, {"\"M * N\"", "\"prod(M) * prod(N)\""}},
       "signature.inputs.x.shape: '[*M, *N]' cannot be resolved on every call"},
      {"unused index", {{"forall: {M: Dim,", "forall: {K: Dim, M: Dim,"}}, "signature.forall.K: the index is declared but no declaration uses it"},
      {"duplicate name", {{"forall: {M: Dim,", "forall: {scale: Dim, M: Dim,"}},
       "signature.forall.scale: 'scale' is already declared as a parameter"},
      {"reserved out", {{"y: {dtype: T,", "out: {dtype: T,"}}, "signature.outputs.out: 'out' is reserved for the output buffer"},
      {"primitive as name", {{"scale: {type: float", "len: {type: float"}, {"\"scale > 0\"", "\"M > 0\""}},
       "signature.params.len: 'len' is the name of a primitive"},
      {"unknown kind", {{"N: Dim,", "N: Int,"}}, "signature.forall.N: unknown kind 'Int'; a forall kind is Dim, Shape or DType[a | b | ...]"},
      {"bad DType kind", {{"\"DType[float16 | float32]\"", "\"DType[half4]\""}},
       "signature.forall.T: 'DType[half4]' is not a DType[a | b | ...] of dtype names"},
      {"bad param type", {{"type: float,", "type: double,"}}, "signature.params.scale.type: unknown type 'double' in 'double'"},
      {"bad default", {{"default: 1.0", "default: abc"}}, "signature.params.scale.default: 'abc' is not of type float"},
      // A rejected parameter before a tensor parameter: the tensor's bookkeeping once read past the
      // parameters kept (a fuzzer finding, fuzz/manifest/regressions/param_bad_type_before_tensor_param.yaml).
      {"bad param type before a tensor parameter",
       {{"scale: {type: float, default: 1.0}", "scale: {type: double, default: 1.0}\n      w: {dtype: T, shape: \"[N]\"}"}},
       "signature.params.scale.type: unknown type 'double' in 'double'"},
      {"bad default before a tensor parameter",
       {{"scale: {type: float, default: 1.0}", "scale: {type: float, default: abc}\n      w: {dtype: T, shape: \"[N]\"}"}},
       "signature.params.scale.default: 'abc' is not of type float"},
      {"ambiguous union", {{"type: float,", "type: \"bool | str\","}},
       "signature.params.scale.type: type 'bool | str' is a union no single kind describes"},
      {"write_only without mutated", {{"shape: \"[M, N]\"}\n    outputs", "shape: \"[M, N]\", write_only: true}\n    outputs"}},
       "signature.inputs.x.write_only: write_only: true needs mutated: true"},
      {"alias of an unwritten input", {{"y: {dtype: T, shape: \"[M, N]\"}", "y: {dtype: T, shape: \"[M, N]\", alias: x}"}},
       "signature.outputs.y.alias: input 'x' is never written (it declares no mutated)"},
      {"alias with another shape", {{"shape: \"[M, N]\"}\n    outputs", "shape: \"[M, N]\", mutated: true}\n    outputs"},
                                    {"y: {dtype: T, shape: \"[M, N]\"}", "y: {dtype: T, shape: \"[N, M]\", alias: x}"}},
       "signature.outputs.y.alias: the output is input 'x' itself, so it declares the same dtype and shape"},
      {"alias and buffer", {{"shape: \"[M, N]\"}\n    outputs", "shape: \"[M, N]\", mutated: true}\n    outputs"},
                            {"y: {dtype: T, shape: \"[M, N]\"}", "y: {dtype: T, shape: \"[M, N]\", alias: x, buffer: out}"}},
       "signature.outputs.y.alias: an output that declares alias cannot also declare buffer"},
      {"two out buffers", {{"y: {dtype: T, shape: \"[M, N]\"}", "y: {dtype: T, shape: \"[M, N]\", buffer: out}\n      z: {dtype: T, shape: \"[M]\", buffer: out}"}},
       "signature.outputs.z.buffer: at most one output declares buffer: out"},
      {"non-discriminant mutated", {{"shape: \"[M, N]\"}\n    outputs", "shape: \"[M, N]\", mutated: \"scale > 1\"}\n    outputs"}},
       "signature.inputs.x.mutated: 'scale > 1' reads 'scale', which is not a discriminant"},
      {"nullable true", {{"y: {dtype: T, shape: \"[M, N]\"}", "y: {dtype: T, shape: \"[M, N]\", nullable: true}"}},
       "signature.outputs.y.nullable: takes the expression under which the output is returned, not true"},
      {"required after optional", {{"x: {dtype: T, shape: \"[M, N]\"}", "w: {dtype: T, shape: \"[N]\", optional: true}\n      x: {dtype: T, shape: \"[M, N]\"}"}},
       "signature.inputs.x: a required input follows an optional one"},
      {"let cycle", {{"    shape_rules:", "    let: {a: \"b + 1\", b: \"a * 2\"}\n    shape_rules:"}},
       "signature.let.a: let entries form a cycle: a -> b -> a"},
      {"let syntax", {{"    shape_rules:", "    let: {a: \"M +\"}\n    shape_rules:"}}, "signature.let.a: 'M +': column 4"},
      {"family gap", {{"    forall:", "    types:\n      Mat:\n        params: {t: Bool, R: Dim, C: Dim}\n        match: t\n        cases:\n        - {when: false, is: \"[R, C]\"}\n    forall:"},
                      {"scale: {type: float, default: 1.0}", "scale: {type: float, default: 1.0}\n      t: {type: bool, default: false}"},
                      {"x: {dtype: T, shape: \"[M, N]\"}", "x: {dtype: T, shape: \"Mat[t, M, N]\"}"}},
       "signature.inputs.x.shape: the type family cases of Mat[t, M, N] have a gap: no case applies when t = true"},
      {"family overlap", {{"    forall:", "    types:\n      Mat:\n        params: {t: Bool, R: Dim, C: Dim}\n        match: t\n        cases:\n        - {when: false, is: \"[R, C]\"}\n        - {when: false, is: \"[C, R]\"}\n    forall:"}},
       "signature.types.Mat.cases[1].when: overlaps cases[0]: both apply when t = false"},
      {"family unused", {{"    forall:", "    types:\n      Mat:\n        params: {t: Bool, R: Dim, C: Dim}\n        match: t\n        cases:\n        - {when: false, is: \"[R, C]\"}\n        - {when: true, is: \"[C, R]\"}\n    forall:"}},
       "signature.types.Mat: the type family is not used by any shape"},
      {"family cycle", {{"    forall:", "    types:\n      A:\n        params: {t: Bool}\n        match: t\n        cases:\n        - {when: false, is: \"B[t]\"}\n        - {when: true, is: \"[1]\"}\n      B:\n        params: {t: Bool}\n        match: t\n        cases:\n        - {when: false, is: \"A[t]\"}\n        - {when: true, is: \"[2]\"}\n    forall:"}},
       "signature.types.A: type families refer to each other in a cycle"},
      {"family subject not Bool", {{"    forall:", "    types:\n      Mat:\n        params: {t: Bool, R: Dim, C: Dim}\n        match: t\n        cases:\n        - {when: false, is: \"[R, C]\"}\n        - {when: true, is: \"[C, R]\"}\n    forall:"},
                                   {"x: {dtype: T, shape: \"[M, N]\"}", "x: {dtype: T, shape: \"Mat[M, M, N]\"}"}},
       "signature.inputs.x.shape: match subject 'M' must be Bool (a bool parameter or present(...)), not Int"},
      {"dtype combo key", {{"    shape_rules:", "    dtype_combos:\n    - {M: float16}\n    shape_rules:"}},
       "signature.dtype_combos[0]: 'M' is not a DType index or a dtype parameter"},
      {"dtype combo value", {{"    shape_rules:", "    dtype_combos:\n    - {T: int8}\n    shape_rules:"}},
       "signature.dtype_combos[0]: T = int8 is not one of DType[float16 | float32]"},
      {"dtype combo repeated", {{"    shape_rules:", "    dtype_combos:\n    - {T: float16}\n    - {T: float16}\n    shape_rules:"}},
       "signature.dtype_combos[1]: repeats an earlier row"},
      {"no device parameter", {{"      x: {dtype: T, shape: \"[M, N]\"}\n", ""}, {"forall: {M: Dim, N: Dim, T: \"DType[float16 | float32]\"}", "forall: {}"},
                               {"y: {dtype: T, shape: \"[M, N]\"}", "y: {dtype: float32, shape: \"[2]\"}"},
                               {"{M: 4, N: 8, dtype_cases: [{T: float16}], label: unit}", "{label: unit}"}, {"\"M * N\"", "\"2\""},
                               {"    inputs:\n", ""}},
       "signature.params: an op without call-time tensor inputs declares a 'device' parameter"},
      {"composition kind", {{"  roofline:", "  composition: {kind: sequential, stages: [{name: a, op: GemmFwdOp}]}\n  roofline:"}},
       "composition.kind: must be composite, not 'sequential'"},
      {"composition empty", {{"  roofline:", "  composition: {kind: composite, stages: []}\n  roofline:"}}, "composition.stages: must not be empty"},
      {"composition duplicate stage", {{"  roofline:", "  composition: {kind: composite, stages: [{name: a, op: GemmFwdOp}, {name: a, op: GemmFwdOp}]}\n  roofline:"}},
       "composition.stages[1].name: stage 'a' is declared twice"},
      {"composition op and kernel", {{"  roofline:", "  composition: {kind: composite, stages: [{name: a, op: GemmFwdOp, kernel: k}]}\n  roofline:"}},
       "composition.stages[0]: a stage names exactly one of op and kernel"},
      {"label too long", {{"label: unit", "label: a-label-that-is-far-too-long"}},
       "workloads[0].label: 'a-label-that-is-far-too-long' must be 1 to 24 characters of [A-Za-z0-9._-]"},
      {"label characters", {{"label: unit", "label: \"u n\""}}, "workloads[0].label: 'u n' must be 1 to 24 characters"},
      {"missing label", {{", label: unit", ""}}, "workloads[0].label: required field is missing"},
      {"row misses an index", {{"{M: 4, N: 8,", "{M: 4,"}}, "workloads[0]: does not give index 'N', which input 'x' reads"},
      {"row gives an unknown key", {{"{M: 4, N: 8,", "{M: 4, N: 8, Q: 1,"}}, "workloads[0].Q: 'Q' is neither a parameter nor a forall index"},
      {"row gives a DType index", {{"{M: 4, N: 8,", "{M: 4, N: 8, T: float16,"}},
       "workloads[0].T: a DType index is given in dtype_cases, not as a key of the row"},
      {"row without dtype_cases", {{", dtype_cases: [{T: float16}]", ""}}, "workloads[0]: does not give index 'T', which input 'x' reads"},
      {"dtype case outside the set", {{"[{T: float16}]", "[{T: int32}]"}},
       "workloads[0]: dtype_cases[0] gives T = int32, which is not in DType[float16 | float32]"},
      {"row fails a refinement", {{"{M: 4, N: 8,", "{M: 4, N: 8, scale: -1.0,"}},
       "workloads[0]: case 'unit-float16': BaseFwdOp: shape_rules[0] 'scale > 0' is false (scale = -1)"},
      {"negative Dim", {{"{M: 4,", "{M: -4,"}}, "workloads[0]: index 'M' (Dim) must be a non-negative integer, got -4"},
      {"repeated case id", {{"label: unit}", "label: unit}\n  - {M: 4, N: 8, dtype_cases: [{T: float16}], label: unit}"}},
       "workloads[1]: case id 'unit-float16' repeats a case of workloads[0]"},
      {"shared label, other shapes", {{"label: unit}", "label: unit}\n  - {M: 2, N: 8, dtype_cases: [{T: float32}], label: unit}"}},
       "workloads[1].label: shares label 'unit' with workloads[0] but differs in more than dtype"},
      {"no workloads", {{"  - {M: 4, N: 8, dtype_cases: [{T: float16}], label: unit}", "  []"}}, "workloads: must have at least one row"},
      {"roofline not a number", {{"\"M * N\"", "\"M > N\""}}, "roofline.flops: 'M > N' must be a number, not Bool"},
      {"implemented optional never omitted", {{"spec-only", "implemented"},
                                              {"x: {dtype: T, shape: \"[M, N]\"}", "x: {dtype: T, shape: \"[M, N]\"}\n      w: {dtype: T, shape: \"[N]\", optional: true}"},
                                              {"dtype_cases", "some: [w], dtype_cases"}},
       "signature.inputs.w.optional: every workload row passes 'w'; an implemented op's rows also omit it"},
      {"some names a required tensor", {{"dtype_cases", "some: [x], dtype_cases"}}, "workloads[0].some: 'x' is not a tensor declared optional: true"},
      {"range on a floating input", {{"x: {dtype: T, shape: \"[M, N]\"}", "x: {dtype: T, shape: \"[M, N]\", range: \"[0, M]\"}"}},
       "signature.inputs.x.range: a range bounds the values of an integer input: its dtype must be one integer dtype or a "
       "DType index of integer dtypes only, and this input's dtype is 'T'"},
      {"range of one item", {{"x: {dtype: T, shape: \"[M, N]\"}", "x: {dtype: T, shape: \"[M, N]\"}\n      lens: {dtype: int32, shape: \"[M]\", range: \"[M]\"}"}},
       "signature.inputs.lens.range: '[M]' must be a list of two integers, [low, high]"},
      {"range that holds no value in a row", {{"x: {dtype: T, shape: \"[M, N]\"}", "x: {dtype: T, shape: \"[M, N]\"}\n      lens: {dtype: int32, shape: \"[M]\", range: \"[N, M]\"}"}},
       "workloads[0]: input 'lens' range [N, M] = [8, 4] holds no value"},
  };
  for (const Case& c : cases) {
    const std::string what = c.what;
    CAPTURE(what);
    const std::string yaml = mutate(kBase, c.edits);
    const std::string op = yaml.find("base_op:") != std::string::npos ? "base_op" : "BaseFwdOp";
    try {
      SignaturePlan::from_yaml(yaml, op);
      FAIL("accepted: " << what);
    } catch (const ManifestError& e) {
      const std::string message = e.what();
      CAPTURE(message);
      CHECK(message.find("<yaml>: " + op + ": " + c.expected) != std::string::npos);
    }
  }
}

TEST_CASE("a YAML syntax error is a problem of the whole file") {
  test::expect_error<ManifestError>([] { SignaturePlan::from_yaml("A: [1, 2\nB: 3\n", "AFwdOp", "bad.yaml"); },
                                              "bad.yaml: (file): yaml: line 2, column");
  test::expect_error<ManifestError>([] { SignaturePlan::from_yaml("- 1\n- 2\n", "AFwdOp", "list.yaml"); },
                                              "list.yaml: (file): yaml: a manifest file is a non-empty mapping from op name to spec");
  test::expect_error<ValueError>([] { SignaturePlan::from_yaml(kBase, "OtherFwdOp"); },
                                 "the manifest text has no entry named 'OtherFwdOp'");
}
