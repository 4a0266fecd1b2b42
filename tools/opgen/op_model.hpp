// What the generator reads of one manifest entry: the names, C++ types and defaults of its
// parameters, its tensors, its stages, and the text of its signature and workload rows.
#pragma once

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace opgen {

struct ParamModel {
  std::string name;
  std::string manifest_type;  // as written, e.g. "float | None"; "Tensor" for a tensor parameter
  std::string cpp_type;       // e.g. "std::optional<double>"
  std::string default_expr;   // a C++ expression; empty: the parameter is required
  std::string decided_by;     // the stage whose injected sub-op decides the value, if any
};

struct TensorModel {
  std::string name;
  std::string dtype;
  std::string shape;
  bool optional = false;  // inputs: `optional` (true or an expression)
  bool buffer_out = false;  // outputs: `buffer: out`
  std::string note;       // flags worth a comment: mutated, nullable, alias
};

// One field of a call spec or one argument of a kernel's forward. Types: int64, float (double),
// bool, DType, Tensor (arguments only) and enum (a `values` list, named by `enum`).
struct FieldModel {
  std::string name;
  std::string cpp_type;      // e.g. "std::int64_t"; the enum's name for an enum
  std::string default_expr;  // call spec fields only; the type's zero unless the manifest gives one
  std::vector<std::string> enum_values;
  std::string doc;
};

// One kernel interface of an op (the manifest's `interfaces:` entry): the name forward passes
// to kernel_for, its call spec, the arguments and result of its kernels' forward, and the key
// and build identity of the op's own reference kernel.
struct InterfaceModel {
  std::string name;
  std::string type_name;             // the C++ class: name in PascalCase ("rms_norm" -> "RmsNorm")
  std::string doc;
  std::vector<FieldModel> call;
  std::vector<FieldModel> args;
  std::string returns;               // "void", "Tensor", or "Result" for several tensors
  std::vector<std::string> results;  // the names of a Result's tensors
  std::string reference_key;         // "<name>_reference" unless the manifest names another
  std::vector<std::string> identity; // call fields keying the reference's built entry; empty: all

  // The call spec's enum fields.
  std::vector<const FieldModel*> enums() const;
};

struct StageModel {
  std::string name;
  std::string op;  // empty for a stage served by the op's own kernel
};

struct OpModel {
  std::string name;       // the manifest key, e.g. "RMSNormFwdOp"
  std::string stem;       // the manifest file's name without ".yaml"
  std::string family;
  std::string status;
  std::string ref_api;
  std::vector<ParamModel> params;
  std::vector<TensorModel> inputs;
  std::vector<TensorModel> outputs;
  std::vector<StageModel> stages;  // composites only
  std::vector<InterfaceModel> interfaces;
  // Attributes computed from the parameters (not parameters themselves): members of the class
  // that the op's derive() sets after the base constructor has checked the parameters.
  std::vector<FieldModel> derived;
  std::vector<std::string> signature_lines;  // the signature, for the header comment
  std::vector<std::string> workload_lines;   // one flow-style row each

  bool composite() const { return !stages.empty(); }
  // Whether the op has a class yet (status implemented).
  bool has_class() const { return status == "implemented"; }
  // "RMSNormFwdOp" -> "RMSNormFwd": the prefix of the generated Params and Outputs names.
  std::string base_name() const;
};

// "rms_norm" -> "RmsNorm": a snake_case manifest name as a C++ class name.
std::string pascal_case(const std::string& name);

// An op's `interfaces:` section (absent: none). Throws std::runtime_error naming the field.
std::vector<InterfaceModel> read_interfaces(const YAML::Node& node);

// An op's `derived:` section (absent: none): `name: type` or `name: {type: T, doc: D}`, with
// the call spec field types other than enums. Throws std::runtime_error naming the field.
std::vector<FieldModel> read_derived(const YAML::Node& node);

// The ops of one manifest file (its top-level keys, in file order). Throws std::runtime_error
// naming the file, op and field for what the generator cannot express in C++.
std::vector<OpModel> read_manifest(const std::string& path);
// The same for manifest text `text` of the file whose stem (the family's header name) is `stem`;
// messages name `where`. YAML errors are std::runtime_errors too.
std::vector<OpModel> read_manifest_text(const std::string& text, const std::string& stem, const std::string& where);

}  // namespace opgen
