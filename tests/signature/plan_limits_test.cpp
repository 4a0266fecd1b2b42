// Hostile manifests the plan builder must refuse or accept without exhausting the stack or
// shifting past 64 bits: very long names, too many outputs, let chains and type families.
#include <doctest/doctest.h>

#include <string>

#include "tileops/errors.hpp"
#include "signature/signature_plan.hpp"
#include "tileops/errors.hpp"

using tileops::SignaturePlan;
using tileops::ManifestError;

namespace {

// A valid one-input, one-output spec; `extra_signature` goes under `signature:`, `outputs`
// replaces the output list, `top` goes at the entry's top level.
std::string spec(const std::string& family, const std::string& top = "", const std::string& extra_signature = "",
                 const std::string& outputs = "      y: {dtype: float32, shape: \"[M]\"}\n") {
  return "LimitFwdOp:\n  family: " + family + "\n  status: spec-only\n" + top + "  signature:\n    forall: {M: Dim}\n" +
         "    inputs:\n      x: {dtype: float32, shape: \"[M]\"}\n    outputs:\n" + outputs + extra_signature +
         "  workloads:\n  - {M: 4, label: unit}\n  roofline:\n    flops: \"M\"\n";
}

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

}  // namespace

TEST_CASE("names of 200,000 characters are checked in one pass (std::regex recursed per character)") {
  const std::string family(200000, 'a');
  CHECK(SignaturePlan::from_yaml(spec(family), "LimitFwdOp")->family() == family);
  CHECK_THROWS_WITH_AS(SignaturePlan::from_yaml(spec(family + "-"), "LimitFwdOp"),
                       doctest::Contains("is not a lower_snake_case module name"), ManifestError);
  const std::string api = repeat("a.", 50000) + "b";
  CHECK_NOTHROW(SignaturePlan::from_yaml(spec("test", "  ref_api: " + api + "\n"), "LimitFwdOp"));
  CHECK_THROWS_WITH_AS(SignaturePlan::from_yaml(spec("test", "  ref_api: " + repeat("a.", 50000) + "\n"), "LimitFwdOp"),
                       doctest::Contains("ref_api: '"), ManifestError);
  CHECK_THROWS_WITH_AS(SignaturePlan::from_yaml(spec("test", "  ref_api: " + repeat("a.", 50000) + "\n"), "LimitFwdOp"),
                       doctest::Contains("is not a fully qualified name"), ManifestError);
}

TEST_CASE("inputs, out and outputs together fit the 64 bits of an effect branch") {
  std::string outputs;
  for (int i = 0; i < 63; ++i) outputs += "      y" + std::to_string(i) + ": {dtype: float32, shape: \"[M]\"}\n";
  CHECK_THROWS_WITH_AS(SignaturePlan::from_yaml(spec("test", "", "", outputs), "LimitFwdOp"),
                       doctest::Contains("LimitFwdOp: signature.outputs: an op with 1 inputs has at most 62 outputs, not 63"),
                       ManifestError);
}

TEST_CASE("let chains and type families are bounded in number") {
  std::string lets = "    let: {";
  for (int i = 0; i < 257; ++i) lets += (i ? ", " : "") + std::string("a") + std::to_string(i) + ": \"M + 1\"";
  lets += "}\n";
  CHECK_THROWS_WITH_AS(SignaturePlan::from_yaml(spec("test", "", lets), "LimitFwdOp"),
                       doctest::Contains("signature.let: an op has at most 256 let entries, not 257"), ManifestError);
  std::string chain = "    let: {a0: \"M\"";
  for (int i = 1; i < 256; ++i) chain += ", a" + std::to_string(i) + ": \"a" + std::to_string(i - 1) + " + 1\"";
  chain += "}\n    shape_rules:\n    - \"a255 > 0\"\n";
  CHECK_NOTHROW(SignaturePlan::from_yaml(spec("test", "", chain), "LimitFwdOp"));
  std::string types = "    types:\n";
  for (int i = 0; i < 65; ++i) {
    types += "      F" + std::to_string(i) + ":\n        params: {t: Bool}\n        match: t\n        cases:\n" +
             "        - {when: false, is: \"[1]\"}\n        - {when: true, is: \"[2]\"}\n";
  }
  CHECK_THROWS_WITH_AS(SignaturePlan::from_yaml(spec("test", "", types), "LimitFwdOp"),
                       doctest::Contains("signature.types: an op has at most 64 type families, not 65"), ManifestError);
}
