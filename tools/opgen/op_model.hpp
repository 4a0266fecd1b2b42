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
};

struct TensorModel {
  std::string name;
  std::string dtype;
  std::string shape;
  bool optional = false;  // inputs: `optional` (true or an expression)
  bool buffer_out = false;  // outputs: `buffer: out`
  std::string note;       // flags worth a comment: mutated, nullable, alias
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
  std::vector<std::string> signature_lines;  // the signature, for the header comment
  std::vector<std::string> workload_lines;   // one flow-style row each

  bool composite() const { return !stages.empty(); }
  // "RMSNormFwdOp" -> "RMSNormFwd": the prefix of the generated Params and Outputs names.
  std::string base_name() const;
};

// The ops of one manifest file (its top-level keys, in file order). Throws std::runtime_error
// naming the file, op and field for what the generator cannot express in C++.
std::vector<OpModel> read_manifest(const std::string& path);

}  // namespace opgen
