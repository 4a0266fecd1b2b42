#include "op_model.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "cpp_type.hpp"

namespace opgen {
namespace {

std::string flow(const YAML::Node& node) {
  YAML::Emitter out;
  out.SetMapFormat(YAML::Flow);
  out.SetSeqFormat(YAML::Flow);
  out.SetNullFormat(YAML::LowerNull);
  out << node;
  std::string text = out.c_str();
  std::replace(text.begin(), text.end(), '\n', ' ');  // a comment line stays one line
  return text;
}

std::string str(const YAML::Node& node, const char* key) { return node[key] ? node[key].as<std::string>() : ""; }

// `optional: true` or a discriminant expression; anything but `false` may be omitted.
bool maybe_omitted(const YAML::Node& node) {
  if (!node) return false;
  return node.Scalar() != "false";
}

TensorModel tensor(const std::string& name, const YAML::Node& node) {
  TensorModel t;
  t.name = name;
  t.dtype = str(node, "dtype");
  t.shape = str(node, "shape");
  t.optional = maybe_omitted(node["optional"]);
  t.buffer_out = str(node, "buffer") == "out";
  for (const char* flag : {"mutated", "nullable", "alias"}) {
    if (node[flag]) t.note += std::string(t.note.empty() ? "" : ", ") + flag + ": " + node[flag].as<std::string>();
  }
  return t;
}

ParamModel param(const std::string& name, const YAML::Node& node) {
  ParamModel p;
  p.name = name;
  if (node["dtype"] || node["shape"]) {
    p.manifest_type = "Tensor";
    p.cpp_type = "Tensor";
    if (maybe_omitted(node["optional"])) p.default_expr = "Tensor()";
    return p;
  }
  p.manifest_type = str(node, "type");
  p.cpp_type = cpp_type(p.manifest_type);
  if (node["default"]) p.default_expr = cpp_default(p.manifest_type, node["default"]);
  if (node["decided_by"]) p.decided_by = node["decided_by"].as<std::string>();
  return p;
}

// The op's signature as the header comment shows it: one line per section entry.
std::vector<std::string> signature_lines(const YAML::Node& sig) {
  std::vector<std::string> lines;
  for (const auto& section : sig) {
    const std::string key = section.first.as<std::string>();
    if (section.second.IsMap()) {
      lines.push_back(key + ":");
      for (const auto& entry : section.second) {
        lines.push_back("  " + entry.first.as<std::string>() + ": " + flow(entry.second));
      }
    } else if (section.second.IsSequence()) {
      lines.push_back(key + ":");
      for (const auto& entry : section.second) lines.push_back("  - " + flow(entry));
    } else {
      lines.push_back(key + ": " + flow(section.second));
    }
  }
  return lines;
}

// C++ keywords and the names the generated code gives members of its own: a parameter,
// input or output named like one would make a header that does not compile.
const std::set<std::string, std::less<>> kTakenNames = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
    "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
    "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
    "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
    "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
    "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
    "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
    "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
    // the op's constructor and call take these beside the manifest's names
    "target", "out", "params", "args"};

// Refuses a signature name the generated C++ cannot use, naming what it is.
const std::string& usable_name(const std::string& name, const char* what) {
  const bool identifier = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
                          std::all_of(name.begin(), name.end(), [](char c) {
                            return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                          });
  if (!identifier) throw std::runtime_error(std::string(what) + " '" + name + "' is not a C++ identifier");
  if (kTakenNames.contains(name)) {
    throw std::runtime_error(std::string(what) + " '" + name +
                             "' is a C++ keyword or a name the generated op class uses itself; rename it");
  }
  return name;
}

OpModel read_op(const std::string& name, const YAML::Node& node, const std::string& stem) {
  OpModel op;
  op.name = name;
  op.stem = stem;
  op.family = str(node, "family");
  op.status = str(node, "status");
  op.ref_api = str(node, "ref_api");
  const YAML::Node sig = node["signature"];
  if (sig) {
    for (const auto& kv : sig["params"]) {
      op.params.push_back(param(usable_name(kv.first.as<std::string>(), "parameter"), kv.second));
    }
    for (const auto& kv : sig["inputs"]) {
      op.inputs.push_back(tensor(usable_name(kv.first.as<std::string>(), "input"), kv.second));
    }
    for (const auto& kv : sig["outputs"]) {
      op.outputs.push_back(tensor(usable_name(kv.first.as<std::string>(), "output"), kv.second));
    }
    op.signature_lines = signature_lines(sig);
  }
  for (const auto& row : node["workloads"]) op.workload_lines.push_back(flow(row));
  if (const YAML::Node comp = node["composition"]) {
    for (const auto& s : comp["stages"]) op.stages.push_back({str(s, "name"), str(s, "op")});
  }
  for (const ParamModel& p : op.params) {
    if (p.decided_by.empty()) continue;
    const bool staged = std::any_of(op.stages.begin(), op.stages.end(),
                                    [&](const StageModel& s) { return s.name == p.decided_by && !s.op.empty(); });
    if (!staged) {
      throw std::runtime_error("parameter '" + p.name + "' is decided_by '" + p.decided_by +
                               "', which is no composition stage served by a sub-op");
    }
  }
  op.interfaces = read_interfaces(node["interfaces"]);
  op.derived = read_derived(node["derived"]);
  for (const FieldModel& d : op.derived) {
    usable_name(d.name, "derived attribute");
    if (std::any_of(op.params.begin(), op.params.end(), [&](const ParamModel& p) { return p.name == d.name; })) {
      throw std::runtime_error("derived." + d.name + ": the name is a parameter's; a derived attribute is not a parameter");
    }
  }
  return op;
}

}  // namespace

std::string OpModel::base_name() const {
  return name.size() > 2 && name.ends_with("Op") ? name.substr(0, name.size() - 2) : name;
}

std::vector<OpModel> read_manifest(const std::string& path) {
  std::string stem = path.substr(path.find_last_of('/') + 1);
  if (stem.ends_with(".yaml")) stem.resize(stem.size() - 5);
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) throw std::runtime_error("cannot read " + path);
  return read_manifest_text(text.str(), stem, path);
}

std::vector<OpModel> read_manifest_text(const std::string& text, const std::string& stem, const std::string& where) {
  const YAML::Node root = YAML::Load(text);
  if (!root.IsMap() && !root.IsNull()) throw std::runtime_error(where + ": expected a map of ops at the top level");
  std::vector<OpModel> ops;
  for (const auto& kv : root) {
    const std::string name = kv.first.as<std::string>();
    try {
      ops.push_back(read_op(name, kv.second, stem));
    } catch (const std::exception& e) {
      throw std::runtime_error(where + ": " + name + ": " + e.what());
    }
  }
  return ops;
}

}  // namespace opgen
