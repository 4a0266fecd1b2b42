// The parsed form of one manifest entry (`manifests/<family>.yaml`, key = op class name). The
// loader fills it field by field and rejects unknown fields; expressions stay text here and are
// compiled by the signature plan.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tileops/value.hpp"

namespace tileops {
namespace manifest {

// `forall: {M: Dim, S: Shape, T: "DType[float16 | bfloat16]"}`.
struct ForallDecl {
  std::string name;
  std::string kind;  // as written
};

// One `signature.params` entry: an ordinary parameter (`type`, `default`, `kw_only`) or a
// construction-time tensor (`dtype`, `shape`, `optional`, `device`, `contiguous`).
struct ParamDecl {
  std::string name;
  std::string type;                    // empty for a construction-time tensor
  std::optional<Value> default_value;  // nullopt: the parameter is required
  bool kw_only = false;
  // A composition stage whose injected sub-op decides the value (its accessor of this name)
  // before the base constructor checks it; empty when the caller's value stands.
  std::string decided_by;
  bool is_tensor = false;
  std::string dtype;
  std::string shape;
  bool optional = false;
  bool device_cpu = false;
  bool contiguous = false;
};

// One `signature.inputs` entry (a call-time tensor).
struct InputDecl {
  std::string name;
  std::string dtype;
  std::string shape;
  bool optional = false;      // `optional: true`
  std::string optional_expr;  // `optional: "<discriminant expression>"`
  bool mutated = false;       // `mutated: true`
  std::string mutated_expr;   // `mutated: "<discriminant expression>"`
  bool write_only = false;
  bool contiguous = false;
  bool device_cpu = false;    // `device: cpu`
  std::string range;          // `range: "[low, high]"`: the values of an integer input; empty: any
};

// One `signature.outputs` entry.
struct OutputDecl {
  std::string name;
  std::string dtype;
  std::string shape;
  std::string nullable;  // the expression under which the output is returned; empty: always
  bool buffer_out = false;
  std::vector<std::string> may_alias;  // with buffer_out: the inputs `out` may be (the same view)
  std::string alias;     // an input name; empty: none
  bool contiguous = false;
};

struct FamilyCase {
  std::vector<Value> when;  // one value per match subject
  std::string is;           // a shape term
};

// One `signature.types` entry: a type family.
struct TypeFamilyDecl {
  std::string name;
  std::vector<std::pair<std::string, std::string>> params;  // name, kind (Bool, Dim, Shape)
  std::vector<std::string> match;                           // the subject(s): family param names
  bool tuple_match = false;                                 // `match: [a, b]`
  std::vector<FamilyCase> cases;
};

struct LetDecl {
  std::string name;
  std::string expr;
};

// One `shape_rules` entry: the expression, and the sentence a failed check shows instead of it
// (written `- {rule: "eps > 0", message: "eps must be positive"}`; empty for a bare expression).
struct RuleDecl {
  std::string expr;
  std::string message;
};

// One `workloads` row.
struct WorkloadRow {
  std::vector<std::pair<std::string, Value>> values;  // parameters and indices, as written
  std::vector<std::string> some;                      // optional tensors passed
  std::vector<std::vector<std::pair<std::string, std::string>>> dtype_cases;  // index -> dtype name
  std::string label;
};

struct RooflineDecl {
  std::string flops;
  std::string bytes;  // empty: derived from the traffic
};

struct StageDecl {
  std::string name;
  std::string op;      // a manifest op, or
  std::string kernel;  // a key of the op's own kernel_types
  bool optional = false;
};

struct CompositionDecl {
  std::string kind;  // "composite"
  std::vector<StageDecl> stages;
};

}  // namespace manifest

class OpSpec {
 public:
  std::string name;  // the op class name (the entry's key)
  std::string file;  // the manifest file name it came from
  std::string canonical;  // the entry as YAML in one layout: equal for entries that say the same
  std::string family;
  std::string status;  // "implemented" or "spec-only"
  std::string ref_api;
  std::vector<manifest::ForallDecl> forall;
  std::vector<manifest::ParamDecl> params;
  std::vector<manifest::InputDecl> inputs;
  std::vector<manifest::OutputDecl> outputs;
  std::vector<manifest::TypeFamilyDecl> types;
  std::vector<manifest::LetDecl> lets;
  std::vector<manifest::RuleDecl> shape_rules;
  std::vector<std::vector<std::pair<std::string, std::string>>> dtype_combos;  // index -> dtype name
  std::vector<manifest::WorkloadRow> workloads;
  manifest::RooflineDecl roofline;
  std::optional<manifest::CompositionDecl> composition;
};

}  // namespace tileops
