#include "signature/plan_builder.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include "signature/expr/compiler.hpp"
#include "signature/expr/parser.hpp"
#include "signature/expr/primitives.hpp"

namespace tileops::detail {
namespace {

// The name checks walk the text once: std::regex matching recurses once per character, so a
// long manifest value would exhaust the stack.
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_lower(c) || is_upper(c) || is_digit(c); }

// [A-Za-z_][A-Za-z0-9_]*
bool is_identifier(std::string_view s) {
  if (s.empty() || is_digit(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return is_alnum(c) || c == '_'; });
}

// [A-Z][A-Za-z0-9]*(Fwd|Bwd)Op
bool is_op_name(std::string_view s) {
  if (s.size() < 6 || !is_upper(s[0]) || !std::all_of(s.begin(), s.end(), is_alnum)) return false;
  return s.ends_with("FwdOp") || s.ends_with("BwdOp");
}

// [a-z][a-z0-9_]*
bool is_module_name(std::string_view s) {
  if (s.empty() || !is_lower(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return is_lower(c) || is_digit(c) || c == '_'; });
}

// identifiers joined by '.'
bool is_qualified_name(std::string_view s) {
  for (std::size_t start = 0;;) {
    const std::size_t dot = s.find('.', start);
    if (!is_identifier(s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// Let entries and type families refer to each other in chains the checks follow recursively.
constexpr std::size_t kMaxLets = 256;
constexpr std::size_t kMaxFamilies = 64;

// The names a parsed expression mentions.
void mentioned(const expr::Ast& a, std::set<std::string>& out) {
  if (a.type == expr::AstType::Name) out.insert(a.text);
  for (const expr::Ast& k : a.kids) mentioned(k, out);
}

// "'source': reason", without repeating the source when the reason already starts with it.
std::string expression_problem(const std::string& source, const std::string& reason) {
  const std::string quoted = "'" + source + "': ";
  return reason.rfind(quoted, 0) == 0 ? reason : quoted + reason;
}

}  // namespace

BuildResult build_plan(OpSpec spec) { return PlanBuilder(std::move(spec)).run(); }

PlanBuilder::PlanBuilder(OpSpec spec) : plan_(std::make_shared<CompiledPlan>()) { plan_->spec_ = std::move(spec); }

void PlanBuilder::problem(const std::string& field, const std::string& reason) {
  problems_.push_back({plan_->spec_.file, plan_->spec_.name, field, reason});
}

BuildResult PlanBuilder::run() {
  const auto done = [this] { return !problems_.empty(); };
  const auto fail = [this] { return BuildResult{nullptr, std::move(problems_)}; };
  declare_names();
  if (done()) return fail();
  compile_lets();
  check_families();
  if (done()) return fail();
  compile_tensors();
  compile_rules_and_roofline();
  check_effects_and_composition();
  if (done()) return fail();
  analyse_branches();
  if (done()) return fail();
  check_workloads();
  if (done()) return fail();
  return BuildResult{plan_, {}};
}

std::optional<Expr> PlanBuilder::compile(const std::string& source, const std::string& field,
                                         const expr::CompileOptions& options) {
  try {
    return expr::compile_expression(source, plan_->scope_, options);
  } catch (const ValueError& e) {
    problem(field, expression_problem(source, e.what()));
    return std::nullopt;
  }
}

std::optional<Expr> PlanBuilder::compile_ast(const expr::Ast& ast, const std::string& source, const std::string& field) {
  try {
    return expr::compile_ast(ast, source, plan_->scope_);
  } catch (const ValueError& e) {
    problem(field, expression_problem(source, e.what()));
    return std::nullopt;
  }
}

bool PlanBuilder::finite_param_slot(int slot) const {
  const SlotDecl& d = plan_->slots_[static_cast<std::size_t>(slot)];
  return d.source == SlotDecl::Source::Param && plan_->params_[static_cast<std::size_t>(d.param)].type.finite();
}

std::optional<Expr> PlanBuilder::compile_discriminant(const std::string& source, const std::string& field) {
  std::optional<Expr> e = compile(source, field);
  if (!e) return e;
  if (e->root.kind != expr::kind_of(expr::Base::Bool)) {
    problem(field, "'" + source + "' must be Bool, not " + expr::kind_name(e->root.kind));
    return std::nullopt;
  }
  for (int s : e->slots) {
    if (!finite_param_slot(s)) {
      problem(field, "'" + source + "' reads '" + plan_->slots_[static_cast<std::size_t>(s)].name +
                         "', which is not a discriminant (a discriminant expression reads only bool or enum parameters "
                         "and present(...))");
      return std::nullopt;
    }
  }
  return e;
}

void PlanBuilder::declare_names() {
  CompiledPlan& p = *plan_;
  const OpSpec& s = p.spec_;
  if (!is_op_name(s.name)) problem("(entry)", "an op name is PascalCase and ends in FwdOp or BwdOp");
  if (!is_module_name(s.family)) problem("family", "'" + s.family + "' is not a lower_snake_case module name");
  if (!s.ref_api.empty() && !is_qualified_name(s.ref_api)) {
    problem("ref_api", "'" + s.ref_api + "' is not a fully qualified name such as torch.matmul");
  }

  std::map<std::string, std::string> declared;
  const auto declare = [&](const std::string& name, const std::string& field, const std::string& what) {
    DType d;
    if (!is_identifier(name)) {
      problem(field, "'" + name + "' is not an identifier");
    } else if (name == "out") {
      problem(field, "'out' is reserved for the output buffer");
    } else if (name == "present" || name == "bytes" || expr::find_primitive(name) >= 0) {
      problem(field, "'" + name + "' is the name of a primitive");
    } else if (try_parse_dtype(name, d) && dtype_name(d) == name) {
      problem(field, "'" + name + "' is the name of a dtype");
    } else if (const auto it = declared.find(name); it != declared.end()) {
      problem(field, "'" + name + "' is already declared as " + it->second);
    } else {
      declared.emplace(name, what);
      return true;
    }
    return false;
  };

  for (const auto& prm : s.params) {
    const std::string field = "signature.params." + prm.name;
    declare(prm.name, field, "a parameter");
    ParamInfo info;
    info.name = prm.name;
    info.is_tensor = prm.is_tensor;
    if (!prm.is_tensor) {
      try {
        info.type = manifest::parse_param_type(prm.type);
      } catch (const ValueError& e) {
        problem(field + ".type", e.what());
        p.params_.push_back(std::move(info));  // params_ stays aligned with s.params
        continue;
      }
      if (prm.default_value) {
        info.default_value = info.type.convert(*prm.default_value);
        if (!info.default_value) {
          problem(field + ".default", value_str(*prm.default_value) + " is not of type " + prm.type);
          p.params_.push_back(std::move(info));
          continue;
        }
      }
      info.is_device = prm.name == "device" && info.type.device;
      if (info.type.device && prm.name != "device") problem(field + ".type", "only the parameter named 'device' may have a device type");
      info.slot = static_cast<int>(p.slots_.size());
      SlotDecl slot;
      slot.name = prm.name;
      slot.source = SlotDecl::Source::Param;
      slot.kind = info.type.kind();
      slot.kind_text = prm.type;
      slot.param = static_cast<int>(p.params_.size());
      p.slots_.push_back(slot);
      if (info.is_device) p.device_param_ = static_cast<int>(p.params_.size());
    }
    p.params_.push_back(std::move(info));
  }
  for (const auto& f : s.forall) {
    const std::string field = "signature.forall." + f.name;
    declare(f.name, field, "a forall index");
    SlotDecl slot;
    slot.name = f.name;
    slot.source = SlotDecl::Source::Index;
    slot.kind_text = f.kind;
    if (f.kind == "Dim") {
      slot.kind = expr::kind_of(expr::Base::Int);
    } else if (f.kind == "Shape") {
      slot.kind = expr::kind_of(expr::Base::IntList);
    } else if (f.kind.rfind("DType[", 0) == 0 && f.kind.back() == ']') {
      slot.kind = expr::kind_of(expr::Base::DType);
      try {
        const manifest::ParamType t = manifest::parse_param_type(f.kind.substr(6, f.kind.size() - 7));
        if (t.dtypes.empty() || t.none || t.kind().base != expr::Base::DType) throw ValueError("");
        slot.dtypes = t.dtypes;
      } catch (const ValueError&) {
        problem(field, "'" + f.kind + "' is not a DType[a | b | ...] of dtype names");
      }
    } else {
      problem(field, "unknown kind '" + f.kind + "'; a forall kind is Dim, Shape or DType[a | b | ...]");
    }
    p.slots_.push_back(std::move(slot));
  }
  for (const auto& let : s.lets) {
    declare(let.name, "signature.let." + let.name, "a let entry");
    SlotDecl slot;
    slot.name = let.name;
    slot.source = SlotDecl::Source::Let;
    p.slots_.push_back(std::move(slot));
  }

  const auto add_tensor = [&](TensorDecl t) {
    t.position = static_cast<int>(std::count_if(p.tensors_.begin(), p.tensors_.end(),
                                                [&](const TensorDecl& o) { return o.role == t.role; }));
    p.tensors_.push_back(std::move(t));
  };
  for (const auto& in : s.inputs) {
    declare(in.name, "signature.inputs." + in.name, "an input");
    TensorDecl t;
    t.name = in.name;
    t.role = TensorRole::Input;
    t.optional = in.optional;
    t.mutated = in.mutated;
    t.write_only = in.write_only;
    t.contiguous = in.contiguous;
    t.device_cpu = in.device_cpu;
    add_tensor(std::move(t));
  }
  p.n_inputs_ = static_cast<int>(s.inputs.size());
  if (p.n_inputs_ > 48) problem("signature.inputs", "an op takes at most 48 inputs");
  for (std::size_t k = 0; k < s.params.size(); ++k) {
    if (!s.params[k].is_tensor) continue;
    TensorDecl t;
    t.name = s.params[k].name;
    t.role = TensorRole::Construction;
    t.optional = s.params[k].optional;
    t.contiguous = s.params[k].contiguous;
    t.device_cpu = s.params[k].device_cpu;
    p.params_[k].tensor = static_cast<int>(p.tensors_.size());
    add_tensor(std::move(t));
    ++p.n_construction_;
  }
  for (const auto& out : s.outputs) {
    declare(out.name, "signature.outputs." + out.name, "an output");
    TensorDecl t;
    t.name = out.name;
    t.role = TensorRole::Output;
    t.buffer_out = out.buffer_out;
    t.contiguous = out.contiguous;
    add_tensor(std::move(t));
  }
  p.n_outputs_ = static_cast<int>(s.outputs.size());
  // A call's effect branch is a 64-bit set: one bit per input, one for `out`, one per output.
  if (p.n_inputs_ <= 48 && p.n_inputs_ + 1 + p.n_outputs_ > 64) {
    problem("signature.outputs", "an op with " + std::to_string(p.n_inputs_) + " inputs has at most " +
                                     std::to_string(63 - p.n_inputs_) + " outputs, not " + std::to_string(p.n_outputs_));
  }
  if (s.lets.size() > kMaxLets) {
    problem("signature.let", "an op has at most " + std::to_string(kMaxLets) + " let entries, not " + std::to_string(s.lets.size()));
  }
  if (s.types.size() > kMaxFamilies) {
    problem("signature.types", "an op has at most " + std::to_string(kMaxFamilies) + " type families, not " +
                                   std::to_string(s.types.size()));
  }
  for (const auto& fam : s.types) {
    declare(fam.name, "signature.types." + fam.name, "a type family");
    family_names_.push_back(fam.name);
  }

  for (std::size_t i = 0; i < p.slots_.size(); ++i) {
    const SlotDecl& d = p.slots_[i];
    if (d.source == SlotDecl::Source::Let) continue;
    expr::NameInfo info;
    info.index = static_cast<int>(i);
    info.kind = d.kind;
    if (d.source == SlotDecl::Source::Param) {
      info.members = p.params_[static_cast<std::size_t>(d.param)].type.members();
    } else {
      for (DType t : d.dtypes) info.members.emplace_back(dtype_name(t));
    }
    p.scope_.add(d.name, std::move(info));
  }
  for (std::size_t i = 0; i < p.tensors_.size(); ++i) {
    expr::NameInfo info;
    info.what = expr::NameInfo::What::Tensor;
    info.index = static_cast<int>(i);
    info.kind = expr::kind_of(expr::Base::Tensor);
    p.scope_.add(p.tensors_[i].name, std::move(info));
  }
}

void PlanBuilder::compile_lets() {
  CompiledPlan& p = *plan_;
  const auto& lets = p.spec_.lets;
  std::vector<std::optional<expr::Ast>> asts(lets.size());
  std::vector<std::vector<std::size_t>> deps(lets.size());
  for (std::size_t i = 0; i < lets.size(); ++i) {
    try {
      asts[i] = expr::parse_expression(lets[i].expr);
    } catch (const ValueError& e) {
      problem("signature.let." + lets[i].name, "'" + lets[i].expr + "': " + e.what());
      continue;
    }
    std::set<std::string> names;
    mentioned(*asts[i], names);
    for (std::size_t j = 0; j < lets.size(); ++j) {
      if (names.count(lets[j].name)) deps[i].push_back(j);
    }
  }
  // Depth-first topological order; a back edge is a cycle.
  std::vector<int> state(lets.size(), 0);
  std::vector<std::size_t> order;
  std::vector<std::size_t> path;
  bool cycle = false;
  const std::function<void(std::size_t)> visit = [&](std::size_t i) {
    if (cycle || state[i] == 2) return;
    if (state[i] == 1) {
      std::string chain;
      const auto from = std::find(path.begin(), path.end(), i);
      for (auto it = from; it != path.end(); ++it) chain += lets[*it].name + " -> ";
      problem("signature.let." + lets[i].name, "let entries form a cycle: " + chain + lets[i].name);
      cycle = true;
      return;
    }
    state[i] = 1;
    path.push_back(i);
    for (std::size_t j : deps[i]) visit(j);
    path.pop_back();
    state[i] = 2;
    order.push_back(i);
  };
  for (std::size_t i = 0; i < lets.size(); ++i) visit(i);
  if (cycle) return;
  const int first_let = static_cast<int>(p.slots_.size() - lets.size());
  for (std::size_t i : order) {
    if (!asts[i]) continue;
    std::optional<Expr> e = compile_ast(*asts[i], lets[i].expr, "signature.let." + lets[i].name);
    if (!e) continue;
    const int slot = first_let + static_cast<int>(i);
    SlotDecl& d = p.slots_[static_cast<std::size_t>(slot)];
    d.kind = e->root.kind;
    d.kind_text = expr::kind_name(d.kind);
    expr::NameInfo info;
    info.index = slot;
    info.kind = d.kind;
    p.scope_.add(d.name, std::move(info));
    p.lets_.push_back({slot, std::move(*e)});
  }
}

void PlanBuilder::compile_rules_and_roofline() {
  CompiledPlan& p = *plan_;
  const OpSpec& s = p.spec_;
  for (std::size_t i = 0; i < s.shape_rules.size(); ++i) {
    const std::string field = "signature.shape_rules[" + std::to_string(i) + "]";
    std::optional<Expr> e = compile(s.shape_rules[i].expr, field);
    if (!e) continue;
    if (e->root.kind != expr::kind_of(expr::Base::Bool)) {
      problem(field, "'" + s.shape_rules[i].expr + "' must be Bool, not " + expr::kind_name(e->root.kind));
      continue;
    }
    Rule r;
    r.text = s.shape_rules[i].expr;
    r.message = s.shape_rules[i].message;
    r.domain = std::all_of(e->slots.begin(), e->slots.end(), [this](int slot) { return finite_param_slot(slot); });
    r.params_only = e->tensors.empty() && std::all_of(e->slots.begin(), e->slots.end(), [&p](int slot) {
                      return p.slots_[static_cast<std::size_t>(slot)].source == SlotDecl::Source::Param;
                    });
    r.expr = std::move(*e);
    p.rules_.push_back(std::move(r));
  }
  expr::CompileOptions roofline;
  roofline.allow_bytes = true;
  if (std::optional<Expr> e = compile(s.roofline.flops, "roofline.flops", roofline)) {
    if (!expr::is_numeric(e->root.kind)) {
      problem("roofline.flops", "'" + s.roofline.flops + "' must be a number, not " + expr::kind_name(e->root.kind));
    }
    p.flops_ = std::move(*e);
  }
  if (!s.roofline.bytes.empty()) {
    if (std::optional<Expr> e = compile(s.roofline.bytes, "roofline.bytes", roofline)) {
      if (!expr::is_numeric(e->root.kind)) {
        problem("roofline.bytes", "'" + s.roofline.bytes + "' must be a number, not " + expr::kind_name(e->root.kind));
      }
      p.bytes_ = std::move(*e);
    }
  }
  for (std::size_t i = 0; i < s.dtype_combos.size(); ++i) {
    const std::string field = "signature.dtype_combos[" + std::to_string(i) + "]";
    std::vector<std::pair<int, DType>> row;
    for (const auto& [name, dtype_text] : s.dtype_combos[i]) {
      const expr::NameInfo* info = p.scope_.find(name);
      const SlotDecl* d = info != nullptr && info->what == expr::NameInfo::What::Slot
                              ? &p.slots_[static_cast<std::size_t>(info->index)]
                              : nullptr;
      if (d == nullptr || d->kind.base != expr::Base::DType || d->source == SlotDecl::Source::Let) {
        problem(field, "'" + name + "' is not a DType index or a dtype parameter");
        continue;
      }
      DType dt;
      std::vector<DType> allowed = d->dtypes;
      if (d->source == SlotDecl::Source::Param) allowed = p.params_[static_cast<std::size_t>(d->param)].type.dtypes;
      if (!try_parse_dtype(dtype_text, dt) || (!allowed.empty() && std::find(allowed.begin(), allowed.end(), dt) == allowed.end())) {
        problem(field, name + " = " + dtype_text + " is not one of " + d->kind_text);
        continue;
      }
      row.emplace_back(info->index, dt);
    }
    if (!p.dtype_combos_.empty()) {
      const auto keys = [](const std::vector<std::pair<int, DType>>& r) {
        std::vector<int> k;
        for (const auto& c : r) k.push_back(c.first);
        std::sort(k.begin(), k.end());
        return k;
      };
      if (keys(row) != keys(p.dtype_combos_.front())) problem(field, "every dtype_combos row has the same keys");
      if (std::find(p.dtype_combos_.begin(), p.dtype_combos_.end(), row) != p.dtype_combos_.end()) {
        problem(field, "repeats an earlier row");
      }
    }
    p.dtype_combos_.push_back(std::move(row));
  }
}

void PlanBuilder::check_effects_and_composition() {
  CompiledPlan& p = *plan_;
  const OpSpec& s = p.spec_;
  bool seen_optional = false;
  for (const auto& in : s.inputs) {
    const std::string field = "signature.inputs." + in.name;
    const bool optional = in.optional || !in.optional_expr.empty();
    if (!optional && seen_optional) problem(field, "a required input follows an optional one");
    seen_optional = seen_optional || optional;
    if (in.write_only && !in.mutated) problem(field + ".write_only", "write_only: true needs mutated: true");
  }
  int buffers = 0;
  for (int o = 0; o < p.n_outputs_; ++o) {
    const auto& out = s.outputs[static_cast<std::size_t>(o)];
    const std::string field = "signature.outputs." + out.name;
    if (out.buffer_out && ++buffers > 1) problem(field + ".buffer", "at most one output declares buffer: out");
    if (out.buffer_out) p.out_output_ = o;
    if (!out.may_alias.empty() && !out.buffer_out) {
      problem(field + ".may_alias", "only the output that declares buffer: out may alias inputs this way");
    }
    for (const std::string& name : out.may_alias) {
      const int i = p.input_index(name);
      if (i < 0) {
        problem(field + ".may_alias", "'" + name + "' is not an input");
      } else if (out.buffer_out) {
        p.out_may_alias_ |= std::uint64_t{1} << i;
      }
    }
    if (out.alias.empty()) continue;
    if (out.buffer_out) problem(field + ".alias", "an output that declares alias cannot also declare buffer");
    const int i = p.input_index(out.alias);
    if (i < 0) {
      problem(field + ".alias", "'" + out.alias + "' is not an input");
      continue;
    }
    const auto& in = s.inputs[static_cast<std::size_t>(i)];
    if (!in.mutated && in.mutated_expr.empty()) {
      problem(field + ".alias", "input '" + out.alias + "' is never written (it declares no mutated)");
      continue;
    }
    const auto canonical = [](const std::string& text) {
      try {
        return expr::to_source(expr::parse_expression(text));
      } catch (const ValueError&) {
        return text;
      }
    };
    if (canonical(in.shape) != canonical(out.shape) || canonical(in.dtype) != canonical(out.dtype)) {
      problem(field + ".alias", "the output is input '" + out.alias + "' itself, so it declares the same dtype and shape (" +
                                    in.dtype + ", " + in.shape + "), not " + out.dtype + ", " + out.shape);
      continue;
    }
    p.tensors_[static_cast<std::size_t>(p.output_tensor(o))].alias_input = i;
  }
  if (p.n_inputs_ == 0 && p.device_param_ < 0) {
    problem("signature.params", "an op without call-time tensor inputs declares a 'device' parameter (type device | None)");
  }
  for (std::size_t i = 0; i < p.slots_.size(); ++i) {
    const SlotDecl& d = p.slots_[i];
    if (d.source != SlotDecl::Source::Index) continue;
    bool used = false;
    const auto reads = [&](const Expr& e) { return std::find(e.slots.begin(), e.slots.end(), static_cast<int>(i)) != e.slots.end(); };
    for (const TensorDecl& t : p.tensors_) {
      used = used || reads(t.dtype.expr);
      for (const ShapeTerm& term : t.shape.terms) used = used || reads(term.whole);
    }
    for (const Rule& r : p.rules_) used = used || reads(r.expr);
    for (const LetInfo& l : p.lets_) used = used || reads(l.expr);
    used = used || reads(p.flops_) || (p.bytes_ && reads(*p.bytes_));
    if (!used) problem("signature.forall." + d.name, "the index is declared but no declaration uses it");
  }
  for (std::size_t f = 0; f < family_names_.size(); ++f) {
    if (family_ok_[f] && !family_used_[f]) {
      problem("signature.types." + family_names_[f], "the type family is not used by any shape");
    }
  }
  if (!s.composition) return;
  const auto& c = *s.composition;
  if (c.kind != "composite") problem("composition.kind", "must be composite, not '" + c.kind + "'");
  if (c.stages.empty()) problem("composition.stages", "must not be empty");
  for (std::size_t i = 0; i < c.stages.size(); ++i) {
    const auto& st = c.stages[i];
    const std::string field = "composition.stages[" + std::to_string(i) + "]";
    if (!is_identifier(st.name)) problem(field + ".name", "'" + st.name + "' is not an identifier");
    for (std::size_t j = 0; j < i; ++j) {
      if (c.stages[j].name == st.name) problem(field + ".name", "stage '" + st.name + "' is declared twice");
    }
    if (st.op.empty() == st.kernel.empty()) problem(field, "a stage names exactly one of op and kernel");
    if (!st.op.empty() && !is_op_name(st.op)) problem(field + ".op", "'" + st.op + "' is not an op name");
    p.stage_names_.push_back(st.name);
  }
}

}  // namespace tileops::detail
