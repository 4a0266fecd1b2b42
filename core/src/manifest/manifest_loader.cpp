#include "manifest/manifest_loader.hpp"

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "text_file.hpp"

namespace tileops::manifest {
namespace {

// Thrown inside one entry's reader; the entry is then dropped.
struct FieldError {
  std::string field;
  std::string reason;
};

// Aliases let a small file stand for a huge tree (a row aliased a thousand times, each with a
// thousand aliased dtype cases); the readers walk every node they are given.
constexpr std::size_t kMaxNodes = 100000;

// Whether `root` has at most kMaxNodes nodes, each use of an alias counting its whole subtree.
// Walks at most kMaxNodes + 1 nodes, with an explicit stack.
bool within_node_budget(const YAML::Node& root) {
  std::vector<YAML::Node> pending{root};
  std::size_t seen = 0;
  while (!pending.empty()) {
    const YAML::Node n = pending.back();
    pending.pop_back();
    if (++seen > kMaxNodes) return false;
    if (n.IsSequence()) {
      for (const auto& item : n) pending.push_back(item);
    } else if (n.IsMap()) {
      for (const auto& kv : n) {
        pending.push_back(kv.first);
        pending.push_back(kv.second);
      }
    }
  }
  return true;
}

std::string join(std::initializer_list<std::string_view> names) {
  std::string s;
  for (std::string_view n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

void check_keys(const YAML::Node& node, const std::string& field, std::initializer_list<std::string_view> allowed) {
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      throw FieldError{field.empty() ? key : field + "." + key,
                       "unknown field '" + key + "'; expected one of " + join(allowed)};
    }
  }
}

YAML::Node require(const YAML::Node& node, const std::string& field, std::string_view key) {
  const YAML::Node v = node[std::string(key)];
  if (!v) throw FieldError{field.empty() ? std::string(key) : field + "." + std::string(key), "required field is missing"};
  return v;
}

std::string sub(const std::string& field, std::string_view key) {
  return field.empty() ? std::string(key) : field + "." + std::string(key);
}

std::string scalar(const YAML::Node& node, const std::string& field) {
  if (!node.IsScalar()) throw FieldError{field, "expected a scalar"};
  return node.Scalar();
}

std::string text(const YAML::Node& node, const std::string& field) {
  const std::string s = scalar(node, field);
  if (s.empty()) throw FieldError{field, "must not be empty"};
  return s;
}

bool is_quoted(const YAML::Node& node) { return node.Tag() == "!"; }

bool boolean(const YAML::Node& node, const std::string& field) {
  const std::string s = scalar(node, field);
  if (!is_quoted(node)) {
    if (s == "true" || s == "True") return true;
    if (s == "false" || s == "False") return false;
  }
  throw FieldError{field, "expected true or false, got '" + s + "'"};
}

// A bool, or an expression string: (flag, expression).
std::pair<bool, std::string> flag_or_expr(const YAML::Node& node, const std::string& field) {
  const std::string s = scalar(node, field);
  if (!is_quoted(node) && (s == "true" || s == "True")) return {true, ""};
  if (!is_quoted(node) && (s == "false" || s == "False")) return {false, ""};
  if (s.empty()) throw FieldError{field, "expected true, false or an expression"};
  return {false, s};
}

// A plain YAML scalar as a Value: null, bool, int, float, or a string.
Value scalar_value(const YAML::Node& node, const std::string& field) {
  const std::string s = node.Scalar();
  if (is_quoted(node)) return s;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return std::monostate{};
  if (s == "true" || s == "True") return true;
  if (s == "false" || s == "False") return false;
  std::int64_t i = 0;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (*b == '+') ++b;
  auto r = std::from_chars(b, e, i);
  if (r.ec == std::errc() && r.ptr == e) return i;
  if (r.ec == std::errc::result_out_of_range) throw FieldError{field, "integer " + s + " does not fit in 64 bits"};
  double d = 0;
  auto rd = std::from_chars(b, e, d);
  if (rd.ec == std::errc() && rd.ptr == e && s.find_first_of(".eE") != std::string::npos) return d;
  return s;
}

// A scalar or a list of integers as a Value.
Value value(const YAML::Node& node, const std::string& field) {
  if (node.IsNull()) return std::monostate{};
  if (node.IsScalar()) return scalar_value(node, field);
  if (node.IsSequence()) {
    std::vector<std::int64_t> list;
    for (std::size_t i = 0; i < node.size(); ++i) {
      const std::string f = field + "[" + std::to_string(i) + "]";
      if (!node[i].IsScalar()) throw FieldError{f, "a list value holds integers only"};
      const Value v = scalar_value(node[i], f);
      if (!std::holds_alternative<std::int64_t>(v)) {
        throw FieldError{f, "a list value holds integers only, got '" + node[i].Scalar() + "'"};
      }
      list.push_back(std::get<std::int64_t>(v));
    }
    return list;
  }
  throw FieldError{field, "expected a scalar or a list of integers"};
}

void require_map(const YAML::Node& node, const std::string& field) {
  if (!node.IsMap()) throw FieldError{field, "expected a mapping"};
}

void require_seq(const YAML::Node& node, const std::string& field) {
  if (!node.IsSequence()) throw FieldError{field, "expected a list"};
}

std::vector<std::string> string_list(const YAML::Node& node, const std::string& field) {
  std::vector<std::string> out;
  if (node.IsScalar() && !node.IsNull()) {
    out.push_back(text(node, field));
    return out;
  }
  require_seq(node, field);
  for (std::size_t i = 0; i < node.size(); ++i) out.push_back(text(node[i], field + "[" + std::to_string(i) + "]"));
  return out;
}

std::vector<std::pair<std::string, std::string>> dtype_row(const YAML::Node& node, const std::string& field) {
  require_map(node, field);
  std::vector<std::pair<std::string, std::string>> row;
  for (const auto& kv : node) row.emplace_back(kv.first.Scalar(), text(kv.second, sub(field, kv.first.Scalar())));
  if (row.empty()) throw FieldError{field, "must not be empty"};
  return row;
}

manifest::ParamDecl read_param(const std::string& name, const YAML::Node& node, const std::string& field) {
  require_map(node, field);
  ParamDecl p;
  p.name = name;
  if (node["dtype"] || node["shape"]) {
    check_keys(node, field, {"dtype", "shape", "optional", "device", "contiguous"});
    p.is_tensor = true;
    p.dtype = text(require(node, field, "dtype"), sub(field, "dtype"));
    p.shape = text(require(node, field, "shape"), sub(field, "shape"));
    if (node["optional"]) p.optional = boolean(node["optional"], sub(field, "optional"));
    if (node["contiguous"]) p.contiguous = boolean(node["contiguous"], sub(field, "contiguous"));
    if (node["device"]) {
      if (scalar(node["device"], sub(field, "device")) != "cpu") throw FieldError{sub(field, "device"), "the only device a tensor may declare is cpu"};
      p.device_cpu = true;
    }
    return p;
  }
  check_keys(node, field, {"type", "default", "kw_only", "decided_by"});
  p.type = text(require(node, field, "type"), sub(field, "type"));
  if (node["default"]) p.default_value = value(node["default"], sub(field, "default"));
  if (node["kw_only"]) p.kw_only = boolean(node["kw_only"], sub(field, "kw_only"));
  if (node["decided_by"]) p.decided_by = text(node["decided_by"], sub(field, "decided_by"));
  return p;
}

InputDecl read_input(const std::string& name, const YAML::Node& node, const std::string& field) {
  require_map(node, field);
  check_keys(node, field, {"dtype", "shape", "optional", "mutated", "write_only", "contiguous", "device", "range"});
  InputDecl t;
  t.name = name;
  t.dtype = text(require(node, field, "dtype"), sub(field, "dtype"));
  t.shape = text(require(node, field, "shape"), sub(field, "shape"));
  if (node["optional"]) std::tie(t.optional, t.optional_expr) = flag_or_expr(node["optional"], sub(field, "optional"));
  if (node["mutated"]) std::tie(t.mutated, t.mutated_expr) = flag_or_expr(node["mutated"], sub(field, "mutated"));
  if (node["write_only"]) t.write_only = boolean(node["write_only"], sub(field, "write_only"));
  if (node["contiguous"]) t.contiguous = boolean(node["contiguous"], sub(field, "contiguous"));
  if (node["range"]) t.range = text(node["range"], sub(field, "range"));
  if (node["device"]) {
    if (scalar(node["device"], sub(field, "device")) != "cpu") throw FieldError{sub(field, "device"), "the only device a tensor may declare is cpu"};
    t.device_cpu = true;
  }
  return t;
}

OutputDecl read_output(const std::string& name, const YAML::Node& node, const std::string& field) {
  require_map(node, field);
  check_keys(node, field, {"dtype", "shape", "nullable", "buffer", "may_alias", "alias", "contiguous"});
  OutputDecl t;
  t.name = name;
  t.dtype = text(require(node, field, "dtype"), sub(field, "dtype"));
  t.shape = text(require(node, field, "shape"), sub(field, "shape"));
  if (node["nullable"]) {
    const auto [flag, expr] = flag_or_expr(node["nullable"], sub(field, "nullable"));
    if (expr.empty()) {
      throw FieldError{sub(field, "nullable"), "takes the expression under which the output is returned, not " +
                                                   std::string(flag ? "true" : "false")};
    }
    t.nullable = expr;
  }
  if (node["buffer"]) {
    if (scalar(node["buffer"], sub(field, "buffer")) != "out") throw FieldError{sub(field, "buffer"), "the only buffer is 'out'"};
    t.buffer_out = true;
  }
  if (node["may_alias"]) t.may_alias = string_list(node["may_alias"], sub(field, "may_alias"));
  if (node["alias"]) t.alias = text(node["alias"], sub(field, "alias"));
  if (node["contiguous"]) t.contiguous = boolean(node["contiguous"], sub(field, "contiguous"));
  return t;
}

TypeFamilyDecl read_family(const std::string& name, const YAML::Node& node, const std::string& field) {
  require_map(node, field);
  check_keys(node, field, {"params", "match", "cases"});
  TypeFamilyDecl f;
  f.name = name;
  const YAML::Node params = require(node, field, "params");
  require_map(params, sub(field, "params"));
  for (const auto& kv : params) {
    f.params.emplace_back(kv.first.Scalar(), text(kv.second, sub(sub(field, "params"), kv.first.Scalar())));
  }
  const YAML::Node match = require(node, field, "match");
  f.tuple_match = match.IsSequence();
  f.match = string_list(match, sub(field, "match"));
  const YAML::Node cases = require(node, field, "cases");
  require_seq(cases, sub(field, "cases"));
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string cf = sub(field, "cases") + "[" + std::to_string(i) + "]";
    require_map(cases[i], cf);
    check_keys(cases[i], cf, {"when", "is"});
    FamilyCase c;
    const YAML::Node when = require(cases[i], cf, "when");
    if (f.tuple_match) {
      require_seq(when, sub(cf, "when"));
      for (std::size_t k = 0; k < when.size(); ++k) {
        if (!when[k].IsScalar()) throw FieldError{sub(cf, "when"), "each value is a scalar"};
        c.when.push_back(scalar_value(when[k], sub(cf, "when")));
      }
    } else {
      if (!when.IsScalar()) throw FieldError{sub(cf, "when"), "expected a scalar (match names one subject)"};
      c.when.push_back(scalar_value(when, sub(cf, "when")));
    }
    c.is = text(require(cases[i], cf, "is"), sub(cf, "is"));
    f.cases.push_back(std::move(c));
  }
  return f;
}

WorkloadRow read_row(const YAML::Node& node, const std::string& field) {
  require_map(node, field);
  WorkloadRow row;
  bool has_label = false;
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    const std::string f = sub(field, key);
    if (key == "label") {
      row.label = scalar(kv.second, f);
      has_label = true;
    } else if (key == "some") {
      row.some = string_list(kv.second, f);
    } else if (key == "dtype_cases") {
      require_seq(kv.second, f);
      if (kv.second.size() == 0) throw FieldError{f, "must not be empty"};
      for (std::size_t i = 0; i < kv.second.size(); ++i) {
        row.dtype_cases.push_back(dtype_row(kv.second[i], f + "[" + std::to_string(i) + "]"));
      }
    } else {
      row.values.emplace_back(key, value(kv.second, f));
    }
  }
  if (!has_label) throw FieldError{sub(field, "label"), "required field is missing"};
  return row;
}

void read_signature(OpSpec& spec, const YAML::Node& node) {
  const std::string field = "signature";
  require_map(node, field);
  check_keys(node, field, {"forall", "params", "inputs", "outputs", "types", "let", "shape_rules", "dtype_combos"});
  if (const YAML::Node forall = node["forall"]) {
    require_map(forall, "signature.forall");
    for (const auto& kv : forall) {
      spec.forall.push_back({kv.first.Scalar(), text(kv.second, "signature.forall." + kv.first.Scalar())});
    }
  }
  const auto each = [&node](std::string_view key, auto&& fn) {
    if (const YAML::Node m = node[std::string(key)]) {
      const std::string f = "signature." + std::string(key);
      require_map(m, f);
      for (const auto& kv : m) fn(kv.first.Scalar(), kv.second, f + "." + kv.first.Scalar());
    }
  };
  each("params", [&](const std::string& n, const YAML::Node& v, const std::string& f) { spec.params.push_back(read_param(n, v, f)); });
  each("inputs", [&](const std::string& n, const YAML::Node& v, const std::string& f) { spec.inputs.push_back(read_input(n, v, f)); });
  each("outputs", [&](const std::string& n, const YAML::Node& v, const std::string& f) { spec.outputs.push_back(read_output(n, v, f)); });
  each("types", [&](const std::string& n, const YAML::Node& v, const std::string& f) { spec.types.push_back(read_family(n, v, f)); });
  each("let", [&](const std::string& n, const YAML::Node& v, const std::string& f) { spec.lets.push_back({n, text(v, f)}); });
  if (const YAML::Node rules = node["shape_rules"]) {
    require_seq(rules, "signature.shape_rules");
    for (std::size_t i = 0; i < rules.size(); ++i) {
      const std::string f = "signature.shape_rules[" + std::to_string(i) + "]";
      if (rules[i].IsMap()) {
        check_keys(rules[i], f, {"rule", "message"});
        spec.shape_rules.push_back({text(require(rules[i], f, "rule"), sub(f, "rule")),
                                    text(require(rules[i], f, "message"), sub(f, "message"))});
      } else {
        spec.shape_rules.push_back({text(rules[i], f), ""});
      }
    }
  }
  if (const YAML::Node combos = node["dtype_combos"]) {
    require_seq(combos, "signature.dtype_combos");
    for (std::size_t i = 0; i < combos.size(); ++i) {
      spec.dtype_combos.push_back(dtype_row(combos[i], "signature.dtype_combos[" + std::to_string(i) + "]"));
    }
  }
}

// Reads entry `name`, each top-level field on its own, so that one run reports everything
// wrong with the entry: one FieldError per unknown field and per malformed or missing field
// (the first problem within each). Returns the spec only when there is none.
std::optional<OpSpec> read_entry(const std::string& name, const YAML::Node& node, const std::string& file,
                                 std::vector<FieldError>& errors) {
  OpSpec spec;
  spec.name = name;
  spec.file = file;
  spec.canonical = YAML::Dump(node);
  require_map(node, "");
  const auto field = [&](auto&& read) {
    try {
      read();
    } catch (const FieldError& e) {
      errors.push_back(e);
    } catch (const YAML::Exception& e) {
      errors.push_back({"", e.msg});
    }
  };
  // `interfaces` and `derived` are read by the op generator (tools/opgen), not at run time.
  const std::initializer_list<std::string_view> known = {"family",   "status",      "ref_api",    "signature",  "workloads",
                                                           "roofline", "composition", "interfaces", "derived"};
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      errors.push_back({key, "unknown field '" + key + "'; expected one of " + join(known)});
    }
  }
  field([&] { spec.family = text(require(node, "", "family"), "family"); });
  field([&] {
    spec.status = text(require(node, "", "status"), "status");
    if (spec.status != "implemented" && spec.status != "spec-only") {
      throw FieldError{"status", "must be implemented or spec-only, not '" + spec.status + "'"};
    }
  });
  field([&] {
    if (node["ref_api"]) spec.ref_api = text(node["ref_api"], "ref_api");
  });
  field([&] { read_signature(spec, require(node, "", "signature")); });
  field([&] {
    const YAML::Node rows = require(node, "", "workloads");
    require_seq(rows, "workloads");
    if (rows.size() == 0) throw FieldError{"workloads", "must have at least one row"};
    for (std::size_t i = 0; i < rows.size(); ++i) {
      spec.workloads.push_back(read_row(rows[i], "workloads[" + std::to_string(i) + "]"));
    }
  });
  field([&] {
    const YAML::Node roofline = require(node, "", "roofline");
    require_map(roofline, "roofline");
    check_keys(roofline, "roofline", {"flops", "bytes"});
    spec.roofline.flops = text(require(roofline, "roofline", "flops"), "roofline.flops");
    if (roofline["bytes"]) spec.roofline.bytes = text(roofline["bytes"], "roofline.bytes");
  });
  field([&] {
    const YAML::Node comp = node["composition"];
    if (!comp) return;
    require_map(comp, "composition");
    check_keys(comp, "composition", {"kind", "stages"});
    CompositionDecl c;
    c.kind = text(require(comp, "composition", "kind"), "composition.kind");
    const YAML::Node stages = require(comp, "composition", "stages");
    require_seq(stages, "composition.stages");
    for (std::size_t i = 0; i < stages.size(); ++i) {
      const std::string f = "composition.stages[" + std::to_string(i) + "]";
      require_map(stages[i], f);
      check_keys(stages[i], f, {"name", "op", "kernel", "optional"});
      StageDecl s;
      s.name = text(require(stages[i], f, "name"), sub(f, "name"));
      if (stages[i]["op"]) s.op = text(stages[i]["op"], sub(f, "op"));
      if (stages[i]["kernel"]) s.kernel = text(stages[i]["kernel"], sub(f, "kernel"));
      if (stages[i]["optional"]) s.optional = boolean(stages[i]["optional"], sub(f, "optional"));
      c.stages.push_back(std::move(s));
    }
    spec.composition = std::move(c);
  });
  field([&] {
    for (const ParamDecl& p : spec.params) {
      if (p.decided_by.empty()) continue;
      const bool staged = spec.composition && std::any_of(spec.composition->stages.begin(), spec.composition->stages.end(),
                                                           [&](const StageDecl& s) { return s.name == p.decided_by && !s.op.empty(); });
      if (!staged) {
        throw FieldError{"signature.params." + p.name + ".decided_by",
                         "names '" + p.decided_by + "', which is no composition stage served by a sub-op"};
      }
    }
  });
  if (!errors.empty()) return std::nullopt;
  return spec;
}

}  // namespace

LoadedFile load_manifest_text(std::string_view source, const std::string& file) {
  LoadedFile out;
  out.file = file;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(source));
  } catch (const YAML::Exception& e) {
    out.problems.push_back({file, "(file)", "yaml",
                            "line " + std::to_string(e.mark.line + 1) + ", column " + std::to_string(e.mark.column + 1) +
                                ": " + e.msg});
    return out;
  }
  if (!within_node_budget(root)) {
    out.problems.push_back({file, "(file)", "yaml",
                            "the document has more than " + std::to_string(kMaxNodes) +
                                " nodes (each use of an alias counts every node under its anchor)"});
    return out;
  }
  if (!root.IsMap() || root.size() == 0) {
    out.problems.push_back({file, "(file)", "yaml", "a manifest file is a non-empty mapping from op name to spec"});
    return out;
  }
  std::set<std::string> names;
  for (const auto& kv : root) {
    const std::string name = kv.first.Scalar();
    if (!names.insert(name).second) {
      out.problems.push_back({file, name, "(entry)", "the op is defined twice in this file"});
      continue;
    }
    std::vector<FieldError> errors;
    try {
      if (auto spec = read_entry(name, kv.second, file, errors)) out.specs.push_back(std::move(*spec));
    } catch (const FieldError& e) {
      errors.push_back(e);
    } catch (const YAML::Exception& e) {
      errors.push_back({"", e.msg});
    }
    for (const FieldError& e : errors) out.problems.push_back({file, name, e.field.empty() ? "(entry)" : e.field, e.reason});
  }
  return out;
}

LoadedFile load_manifest_file(const std::filesystem::path& path) {
  const TextFile file = read_text_file(path);
  if (!file.problem.empty()) {
    LoadedFile out;
    out.file = path_for_message(path);
    out.problems.push_back({out.file, "(file)", "(file)", file.problem});
    return out;
  }
  return load_manifest_text(file.text, path.string());
}

}  // namespace tileops::manifest
