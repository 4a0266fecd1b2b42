#include "emit.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "cpp_type.hpp"

namespace opgen {
namespace {

// The constructor's parameters, by value. Defaults only on the trailing run of defaulted
// parameters (C++ has no keyword arguments).
std::string ctor_params(const OpModel& op) {
  std::string out;
  std::size_t first_default = op.params.size();
  while (first_default > 0 && !op.params[first_default - 1].default_expr.empty()) --first_default;
  for (std::size_t i = 0; i < op.params.size(); ++i) {
    const ParamModel& p = op.params[i];
    out += p.cpp_type + " " + p.name;
    if (i >= first_default) out += " = " + p.default_expr;
    out += ", ";
  }
  return out;
}

std::string call_params(const OpModel& op) {
  std::size_t first_optional = op.inputs.size();
  while (first_optional > 0 && op.inputs[first_optional - 1].optional) --first_optional;
  std::string out;
  for (std::size_t i = 0; i < op.inputs.size(); ++i) {
    out += (i ? ", " : "") + std::string("const Tensor& ") + op.inputs[i].name;
    if (i >= first_optional) out += " = {}";
  }
  const bool buffer = std::any_of(op.outputs.begin(), op.outputs.end(), [](const TensorModel& t) { return t.buffer_out; });
  if (buffer) out += std::string(op.inputs.empty() ? "" : ", ") + "const Tensor& out = {}";
  return out;
}

std::string describe(const TensorModel& t) {
  std::string s = t.name + (t.optional ? " (optional)" : "") + ": " + t.dtype + " " + t.shape;
  if (!t.note.empty()) s += " (" + t.note + ")";
  return s;
}

void emit_comment(std::ostream& o, const OpModel& op) {
  o << "// " << op.name << " (family " << op.family;
  if (!op.ref_api.empty()) o << ", like " << op.ref_api;
  o << "), from manifests/" << op.stem << ".yaml.\n//\n// signature:\n";
  for (const auto& line : op.signature_lines) o << "//   " << line << "\n";
  o << "// workloads:\n";
  for (const auto& line : op.workload_lines) o << "//   - " << line << "\n";
}

void emit_params(std::ostream& o, const OpModel& op) {
  const std::string P = op.base_name() + "Params";
  o << "// " << op.name << "'s parameters, typed, with the manifest's defaults: what the op holds, and\n"
    << "// what a target builder can read from the ParamMap it receives (" << P << "::from(params)).\n";
  o << "struct " << P << " {\n";
  for (const ParamModel& p : op.params) {
    o << "  " << p.cpp_type << " " << p.name;
    o << (p.default_expr.empty() ? "{}" : " = " + p.default_expr) << ";  // " << p.manifest_type << "\n";
  }
  o << "\n  // The typed view of a parameter map (Op::params(), a target builder's params, a workload\n"
    << "  // row's); a parameter the map lacks keeps its default. Throws ValueError for a missing\n"
    << "  // required parameter, TypeError for a value of another kind.\n"
    << "  static " << P << " from(const ParamMap& params) {\n"
    << "    " << P << " p;\n";
  for (const ParamModel& p : op.params) {
    if (p.default_expr.empty()) {
      o << "    p." << p.name << " = op_params::from_value<" << p.cpp_type << ">(params, \"" << p.name << "\");\n";
    } else {
      o << "    if (const Value* v = params.find(\"" << p.name << "\")) p." << p.name << " = op_params::value_as<"
        << p.cpp_type << ">(*v, \"" << p.name << "\");\n";
    }
  }
  o << "    return p;\n  }\n"
    << "  // The parameters by manifest name, in signature order.\n"
    << "  ParamMap to_map() const {\n"
    << "    ParamMap m;\n";
  for (const ParamModel& p : op.params) o << "    m.set(\"" << p.name << "\", op_params::to_value(" << p.name << "));\n";
  o << "    return m;\n  }\n};\n\n";
}

void emit_outputs(std::ostream& o, const OpModel& op) {
  if (op.outputs.size() < 2) return;
  o << "// " << op.name << "'s outputs; a null (nullable) output is an undefined Tensor.\n"
    << "struct " << op.base_name() << "Outputs {\n";
  for (const TensorModel& t : op.outputs) o << "  Tensor " << t.name << ";  // " << describe(t) << "\n";
  o << "};\n\n";
}

// The base class of a family's ops: the parameters every implemented, non-composite op of the
// family declares first, alike (name, type, default, order), held once. None for a family of one
// op or without such parameters.
struct FamilyBase {
  std::string name;  // "<Family>FamilyOp", e.g. RopeFamilyOp
  OpModel model;     // the shared parameters, as an op named `name`
};

bool same_param(const ParamModel& a, const ParamModel& b) {
  return a.name == b.name && a.manifest_type == b.manifest_type && a.default_expr == b.default_expr;
}

std::map<std::string, FamilyBase> family_bases(const std::vector<OpModel>& ops) {
  std::map<std::string, std::vector<const OpModel*>> members;
  for (const OpModel& op : ops) {
    if (op.has_class() && !op.composite()) members[op.family].push_back(&op);
  }
  std::map<std::string, FamilyBase> bases;
  for (const auto& [family, leaves] : members) {
    if (leaves.size() < 2) continue;
    std::vector<ParamModel> shared;
    for (const ParamModel& p : leaves.front()->params) {
      const std::size_t i = shared.size();
      const bool everywhere = std::all_of(leaves.begin(), leaves.end(), [&](const OpModel* leaf) {
        return leaf->params.size() > i && same_param(leaf->params[i], p);
      });
      if (!everywhere || p.manifest_type == "Tensor") break;
      shared.push_back(p);
    }
    if (shared.empty()) continue;
    FamilyBase base;
    base.name = pascal_case(family) + "FamilyOp";
    base.model.name = base.name;
    base.model.family = family;
    base.model.params = std::move(shared);
    bases.emplace(family, std::move(base));
  }
  return bases;
}

bool held_by(const FamilyBase* base, const ParamModel& p) {
  return base != nullptr && std::any_of(base->model.params.begin(), base->model.params.end(),
                                        [&](const ParamModel& q) { return q.name == p.name; });
}

void emit_family_base(std::ostream& o, const FamilyBase& base, const Options& options) {
  const std::string P = base.model.base_name() + "Params";
  const std::string api = options.export_macro.empty() ? "" : options.export_macro + " ";
  emit_params(o, base.model);
  o << "// The base of the " << base.model.family << " family's ops: the parameters they all take first.\n"
    << "class " << api << base.name << " : public Op {\n public:\n"
    << "  using FamilyParams = " << P << ";\n\n"
    << "  // The final values of the family's parameters (given or the manifest's default).\n";
  for (const ParamModel& p : base.model.params) {
    const std::string type = is_scalar(p.cpp_type) ? p.cpp_type : "const " + p.cpp_type + "&";
    o << "  " << type << " " << p.name << "() const { return family_params_." << p.name << "; }\n";
  }
  o << "  const FamilyParams& family_params() const { return family_params_; }\n\n"
    << " protected:\n"
    << "  // `params` holds the leaf's final manifest parameter values, the family's among them.\n"
    << "  " << base.name << "(const OpClass& cls, ParamMap params, Target target)\n"
    << "      : Op(cls, std::move(params), std::move(target)), family_params_(" << P << "::from(Op::params())) {}\n\n"
    << " private:\n  FamilyParams family_params_;\n};\n\n";
}

void emit_class(std::ostream& o, const OpModel& op, const Options& options, const FamilyBase* base) {
  const std::string P = op.base_name() + "Params";
  const std::string parent = base ? base->name : "Op";
  const std::string result = op.outputs.size() == 1 ? "Tensor" : op.base_name() + "Outputs";
  const std::string api = options.export_macro.empty() ? "" : options.export_macro + " ";
  o << "class " << api << op.name << " final : public " << parent << " {\n public:\n";
  if (!op.params.empty()) o << "  using Params = " << P << ";\n\n";
  o << "  // The class record: its kernel interfaces, reference kernels and stages (generated).\n"
    << "  static const OpClass& op_class();\n\n";
  std::string stage_params;
  std::string stage_args;
  for (const StageModel& s : op.stages) {
    if (s.op.empty()) continue;
    stage_params += ", std::shared_ptr<" + s.op + "> " + s.name + " = nullptr";
    stage_args += std::string(stage_args.empty() ? "" : ", ") + "std::move(" + s.name + ")";
  }
  if (op.composite()) {
    o << "  // Stage sub-ops built here inherit `target`; injected ones (non-null) keep their own.\n";
  }
  for (const ParamModel& p : op.params) {
    if (!p.decided_by.empty()) {
      o << "  // An injected `" << p.decided_by << "` decides `" << p.name << "` (its own " << p.name
        << "()) before the base constructor checks the parameters.\n";
    }
  }
  o << "  explicit " << op.name << "(" << ctor_params(op) << "Target target = {}" << stage_params << ")\n";
  if (op.params.empty()) {
    o << "      : Op(op_class(), {}, std::move(target)) {";
  } else {
    o << "      : " << parent << "(op_class(), " << P << "{";
    for (std::size_t i = 0; i < op.params.size(); ++i) {
      const ParamModel& p = op.params[i];
      const std::string given = is_scalar(p.cpp_type) ? p.name : "std::move(" + p.name + ")";
      o << (i ? ", " : "");
      if (p.decided_by.empty()) {
        o << given;
      } else {
        o << "(" << p.decided_by << " ? " << p.cpp_type << "(" << p.decided_by << "->" << p.name << "()) : " << given << ")";
      }
    }
    o << "}.to_map(), std::move(target)),\n        params_(" << P << "::from(Op::params())) {";
  }
  if (!op.derived.empty()) o << "\n    derive();" << (op.composite() ? "" : "\n  ");
  if (op.composite()) o << "\n    hold_stages(" << stage_args << ");\n  ";
  o << "}\n";
  o << "\n  // One call. Inputs:";
  for (const TensorModel& t : op.inputs) o << "\n  //   " << describe(t);
  if (op.inputs.empty()) o << " none";
  o << "\n  // Returns:";
  for (const TensorModel& t : op.outputs) o << "\n  //   " << describe(t);
  o << "\n  " << result << " operator()(" << call_params(op) << ") {\n";
  const bool buffer = std::any_of(op.outputs.begin(), op.outputs.end(), [](const TensorModel& t) { return t.buffer_out; });
  // The arguments are lent to the call (Tensor::borrowed): this frame outlives it, and what the
  // call keeps or returns of them are copies, which own.
  if (op.inputs.empty()) {
    o << "    OpOutputs outputs = call(" << (buffer ? "CallArgs({}, out.borrowed())" : "CallArgs()") << ");\n";
  } else {
    o << "    const std::array<Tensor, " << op.inputs.size() << "> inputs{";
    for (std::size_t i = 0; i < op.inputs.size(); ++i) o << (i ? ", " : "") << op.inputs[i].name << ".borrowed()";
    o << "};\n    OpOutputs outputs = call(CallArgs(inputs" << (buffer ? ", out.borrowed()" : "") << "));\n";
  }
  if (op.outputs.size() == 1) {
    o << "    return std::move(outputs.front());\n";
  } else {
    o << "    return {";
    for (std::size_t i = 0; i < op.outputs.size(); ++i) o << (i ? ", " : "") << "std::move(outputs[" << i << "])";
    o << "};\n";
  }
  o << "  }\n";
  if (!op.params.empty()) {
    o << "\n  // The final parameter values (given or the manifest's default).\n";
    for (const ParamModel& p : op.params) {
      if (held_by(base, p)) continue;
      const std::string type = is_scalar(p.cpp_type) ? p.cpp_type : "const " + p.cpp_type + "&";
      o << "  " << type << " " << p.name << "() const { return params_." << p.name << "; }\n";
    }
    o << "  const Params& typed_params() const { return params_; }\n";
  }
  if (!op.derived.empty()) {
    o << "\n  // Derived attributes: not parameters; derive() computes them from the checked parameters.\n";
    for (const FieldModel& d : op.derived) {
      if (!d.doc.empty()) o << "  // " << d.doc << "\n";
      o << "  " << d.cpp_type << " " << d.name << "() const { return derived_." << d.name << "; }\n";
    }
  }
  o << "\n protected:\n"
    << "  // The computation of one call (written with the op's call specs).\n"
    << "  OpOutputs forward(const CallArgs& args) override;\n";
  if (op.composite()) {
    o << "  // Checks the injected sub-ops and holds every stage's (written with forward).\n  void hold_stages(";
    bool first = true;
    for (const StageModel& s : op.stages) {
      if (s.op.empty()) continue;
      o << (first ? "" : ", ") << "std::shared_ptr<" << s.op << "> " << s.name;
      first = false;
    }
    o << ");\n";
    for (const StageModel& s : op.stages) {
      if (!s.op.empty()) o << "  " << s.op << "* " << s.name << "_ = nullptr;\n";
    }
  }
  if (!op.derived.empty()) {
    o << "  // Sets the derived attributes after the base constructor (written with forward).\n"
      << "  void derive();\n";
  }
  if (!op.params.empty() || !op.derived.empty()) o << "\n private:\n";
  if (!op.params.empty()) o << "  Params params_;\n";
  if (!op.derived.empty()) {
    o << "  struct Derived {\n";
    for (const FieldModel& d : op.derived) o << "    " << d.cpp_type << " " << d.name << " = " << d.default_expr << ";\n";
    o << "  };\n  Derived derived_;\n";
  }
  o << "};\n\n";
}

}  // namespace

std::string emit_header(const std::string& stem, const std::vector<OpModel>& ops,
                        const std::map<std::string, std::string>& home, const Options& options) {
  std::ostringstream o;
  o << "// Generated by tileops-opgen from manifests/" << stem << ".yaml; do not edit: change the manifest.\n"
    << "// Each op's class: a typed constructor with the manifest's defaults, operator() over its\n"
    << "// inputs, typed parameter accessors and a parameter struct. The op's own source defines\n"
    << "// forward() (and a composite's hold_stages()); op_class() is generated too.\n"
    << "#pragma once\n\n"
    << "#include <array>\n#include <cstdint>\n#include <memory>\n#include <optional>\n#include <string>\n"
    << "#include <utility>\n#include <variant>\n#include <vector>\n\n";
  if (!options.export_include.empty()) o << "#include \"" << options.export_include << "\"\n";
  o << "#include \"tileops/op.hpp\"\n#include \"tileops/ops/param_access.hpp\"\n";
  std::set<std::string> includes;
  for (const OpModel& op : ops) {
    for (const StageModel& s : op.stages) {
      const auto it = home.find(s.op);
      if (it != home.end() && it->second != stem) includes.insert(it->second);
    }
  }
  for (const std::string& inc : includes) o << "#include \"" << options.include_prefix << "/" << inc << ".hpp\"\n";
  o << "\nnamespace " << options.ns << " {\n";
  if (options.ns != "tileops") {
    o << "\n";
    for (const char* name : {"CallArgs", "DType", "Device", "Op", "OpClass", "OpOutputs", "ParamMap", "Target", "Tensor", "Value"}) {
      o << "using ::tileops::" << name << ";\n";
    }
    o << "namespace op_params = ::tileops::op_params;\n";
  }
  o << "\n";
  const std::map<std::string, FamilyBase> bases = family_bases(ops);
  std::set<std::string> bases_written;
  for (const OpModel& op : ops) {
    const auto base = op.has_class() && !op.composite() ? bases.find(op.family) : bases.end();
    if (base != bases.end() && bases_written.insert(op.family).second) emit_family_base(o, base->second, options);
    emit_comment(o, op);
    if (!op.has_class()) {
      o << "// Status " << op.status << ": no class until the op is implemented.\n\n";
      continue;
    }
    o << "\n";
    if (!op.params.empty()) emit_params(o, op);
    emit_outputs(o, op);
    emit_class(o, op, options, base != bases.end() ? &base->second : nullptr);
  }
  o << "}  // namespace " << options.ns << "\n";
  return o.str();
}

void emit_catalog_entries(std::ostream& o, const std::vector<const OpModel*>& ops) {
  for (const OpModel* op : ops) {
    if (!op->has_class()) continue;
    o << "      {\"" << op->name << "\", &" << op->name << "::op_class,\n"
      << "       [](const tileops::ParamMap& p, const tileops::Target& t) -> std::unique_ptr<tileops::Op> {\n";
    if (op->params.empty()) {
      o << "         return std::make_unique<" << op->name << ">(t);\n";
    } else {
      o << "         auto q = " << op->base_name() << "Params::from(p);\n"
        << "         return std::make_unique<" << op->name << ">(";
      for (const ParamModel& prm : op->params) o << "std::move(q." << prm.name << "), ";
      o << "t);\n";
    }
    o << "       }},\n";
  }
}

std::string emit_catalog(std::vector<const OpModel*> ops, const Options& options) {
  std::sort(ops.begin(), ops.end(), [](const OpModel* a, const OpModel* b) { return a->name < b->name; });
  std::ostringstream o;
  o << "// Generated by tileops-opgen from the manifests; do not edit.\n"
    << "// The catalogue entry of every implemented op: construct it from a complete parameter map.\n"
    << "#pragma once\n\n#include <memory>\n#include <vector>\n\n#include \"tileops/ops/catalog.hpp\"\n";
  std::set<std::string> stems;
  for (const OpModel* op : ops) stems.insert(op->stem);
  for (const std::string& s : stems) o << "#include \"" << options.include_prefix << "/" << s << ".hpp\"\n";
  o << "\nnamespace " << options.ns << " {\n\n"
    << "// `make` receives every manifest parameter, converted and with defaults filled in.\n"
    << "inline std::vector<OpCatalogEntry> generated_catalog_entries() {\n  return {\n";
  emit_catalog_entries(o, ops);
  o << "  };\n}\n\n}  // namespace " << options.ns << "\n";
  return o.str();
}

}  // namespace opgen
