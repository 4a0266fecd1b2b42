// Compiling tensor declarations: dtype expressions, shape terms, and type family applications
// expanded into one term per combination of match subject values.
#include <algorithm>
#include <functional>

#include "signature/expr/parser.hpp"
#include "signature/plan_builder.hpp"

namespace tileops::detail {
namespace {

using expr::Ast;
using expr::AstType;

// `a` with each name of `map` replaced by its value. Throws ValueError when the result would
// nest deeper than an expression may.
Ast substitute(const Ast& a, const std::vector<std::pair<std::string, Ast>>& map) {
  if (a.type == AstType::Name) {
    for (const auto& [name, value] : map) {
      if (name == a.text) return value;
    }
  }
  Ast copy;
  copy.type = a.type;
  copy.text = a.text;
  copy.ival = a.ival;
  copy.fval = a.fval;
  copy.column = a.column;
  copy.ops = a.ops;
  for (const Ast& k : a.kids) expr::add_kid(copy, substitute(k, map));
  return copy;
}

bool contains_name(const Ast& a, const std::string& name) {
  if (a.type == AstType::Name && a.text == name) return true;
  return std::any_of(a.kids.begin(), a.kids.end(), [&](const Ast& k) { return contains_name(k, name); });
}

struct LinearAst {
  std::int64_t a = 1;
  std::optional<Ast> rest;
};

// `terms` (each with the sign it is added with) as one expression.
Ast signed_sum(std::vector<std::pair<bool, Ast>> terms) {
  Ast sum;
  sum.type = AstType::Binary;
  for (auto& [negative, term] : terms) {
    if (sum.kids.empty() && negative) {
      Ast neg;
      neg.type = AstType::Unary;
      neg.text = "-";
      expr::add_kid(neg, std::move(term));
      expr::add_kid(sum, std::move(neg));
      continue;
    }
    if (!sum.kids.empty()) sum.ops.push_back(negative ? "-" : "+");
    expr::add_kid(sum, std::move(term));
  }
  if (sum.kids.size() == 1) return std::move(sum.kids[0]);
  return sum;
}

// `a` as coeff * M + rest, M appearing once; nullopt when it has another form.
std::optional<LinearAst> linear(const Ast& a, const std::string& m) {
  if (a.type == AstType::Name) return a.text == m ? std::optional<LinearAst>(LinearAst{}) : std::nullopt;
  if (a.type == AstType::Unary && a.text == "+") return linear(a.kids[0], m);
  if (a.type != AstType::Binary) return std::nullopt;
  std::size_t at = a.kids.size();
  for (std::size_t k = 0; k < a.kids.size(); ++k) {
    if (!contains_name(a.kids[k], m)) continue;
    if (at != a.kids.size()) return std::nullopt;
    at = k;
  }
  if (at == a.kids.size()) return std::nullopt;
  if (a.ops[0] == "*") {
    std::int64_t coefficient = 1;
    for (std::size_t k = 0; k < a.kids.size(); ++k) {
      if (k > 0 && a.ops[k - 1] != "*") return std::nullopt;
      if (k == at) continue;
      const Ast& c = a.kids[k];
      if (c.type != AstType::Int || c.ival <= 0 || __builtin_mul_overflow(coefficient, c.ival, &coefficient)) {
        return std::nullopt;
      }
    }
    std::optional<LinearAst> inner = linear(a.kids[at], m);
    if (!inner || inner->rest || __builtin_mul_overflow(inner->a, coefficient, &inner->a)) return std::nullopt;
    return inner;
  }
  if (a.ops[0] != "+" && a.ops[0] != "-") return std::nullopt;
  if (at > 0 && a.ops[at - 1] == "-") return std::nullopt;
  std::optional<LinearAst> inner = linear(a.kids[at], m);
  if (!inner) return std::nullopt;
  std::vector<std::pair<bool, Ast>> terms;
  if (inner->rest) terms.emplace_back(false, std::move(*inner->rest));
  for (std::size_t k = 0; k < a.kids.size(); ++k) {
    if (k != at) terms.emplace_back(k > 0 && a.ops[k - 1] == "-", a.kids[k]);
  }
  inner->rest = signed_sum(std::move(terms));
  return inner;
}

void names_in(const Ast& a, std::vector<std::string>& out) {
  if (a.type == AstType::Name && std::find(out.begin(), out.end(), a.text) == out.end()) out.push_back(a.text);
  for (const Ast& k : a.kids) names_in(k, out);
}

struct Expansion {
  std::vector<std::pair<int, int>> assignment;  // subject id, value index
  Ast term;
};

}  // namespace

void PlanBuilder::check_families() {
  const OpSpec& s = plan_->spec_;
  family_ok_.assign(s.types.size(), true);
  family_used_.assign(s.types.size(), false);
  std::vector<std::vector<std::size_t>> refs(s.types.size());
  for (std::size_t f = 0; f < s.types.size(); ++f) {
    const auto& fam = s.types[f];
    const std::string field = "signature.types." + fam.name;
    for (const auto& [pname, kind] : fam.params) {
      if (kind != "Bool" && kind != "Dim" && kind != "Shape" && kind != "DType") {
        problem(field + ".params." + pname, "unknown kind '" + kind + "'; a family parameter is Bool, Dim, Shape or DType");
        family_ok_[f] = false;
      }
    }
    for (const std::string& m : fam.match) {
      const auto it = std::find_if(fam.params.begin(), fam.params.end(), [&](const auto& pr) { return pr.first == m; });
      if (it == fam.params.end() || it->second != "Bool") {
        problem(field + ".match", "'" + m + "' is not a Bool parameter of the family");
        family_ok_[f] = false;
      }
    }
    if (fam.cases.empty()) {
      problem(field + ".cases", "must not be empty");
      family_ok_[f] = false;
    }
    for (std::size_t c = 0; c < fam.cases.size(); ++c) {
      const std::string cf = field + ".cases[" + std::to_string(c) + "]";
      const auto& when = fam.cases[c].when;
      if (when.size() != fam.match.size() ||
          std::any_of(when.begin(), when.end(), [](const Value& v) { return !std::holds_alternative<bool>(v); })) {
        problem(cf + ".when", "gives one true or false per match subject (" + std::to_string(fam.match.size()) + ")");
        family_ok_[f] = false;
        continue;
      }
      for (std::size_t d = 0; d < c; ++d) {
        const auto& other = fam.cases[d].when;
        if (other.size() == when.size() && std::equal(when.begin(), when.end(), other.begin(), value_equal)) {
          problem(cf + ".when", "overlaps cases[" + std::to_string(d) + "]: both apply when " +
                                    [&] {
                                      std::string w;
                                      for (std::size_t k = 0; k < when.size(); ++k) {
                                        w += (k ? ", " : "") + fam.match[k] + " = " + value_str(when[k]);
                                      }
                                      return w;
                                    }());
          family_ok_[f] = false;
        }
      }
      try {
        std::vector<std::string> names;
        names_in(expr::parse_expression(fam.cases[c].is), names);
        for (std::size_t g = 0; g < s.types.size(); ++g) {
          if (std::find(names.begin(), names.end(), s.types[g].name) != names.end()) refs[f].push_back(g);
        }
      } catch (const ValueError& e) {
        problem(cf + ".is", "'" + fam.cases[c].is + "': " + e.what());
        family_ok_[f] = false;
      }
    }
  }
  std::vector<int> state(s.types.size(), 0);
  const std::function<bool(std::size_t)> cyclic = [&](std::size_t f) {
    if (state[f] == 1) return true;
    if (state[f] == 2) return false;
    state[f] = 1;
    for (std::size_t g : refs[f]) {
      if (cyclic(g)) return true;
    }
    state[f] = 2;
    return false;
  };
  for (std::size_t f = 0; f < s.types.size(); ++f) {
    std::fill(state.begin(), state.end(), 0);
    if (cyclic(f)) {
      problem("signature.types." + s.types[f].name, "type families refer to each other in a cycle");
      family_ok_[f] = false;
    }
  }
}

int PlanBuilder::subject_id(const Ast& ast, const std::string& field) {
  CompiledPlan& p = *plan_;
  const std::string text = expr::to_source(ast);
  for (std::size_t i = 0; i < p.subjects_.size(); ++i) {
    if (p.subjects_[i].text == text) return static_cast<int>(i);
  }
  std::optional<Expr> e = compile_ast(ast, text, field);
  if (!e) return -1;
  Subject s;
  s.text = text;
  if (e->root.kind != expr::kind_of(expr::Base::Bool)) {
    problem(field, "match subject '" + text + "' must be Bool (a bool parameter or present(...)), not " +
                       expr::kind_name(e->root.kind));
    return -1;
  }
  for (int slot : e->slots) {
    if (!finite_param_slot(slot)) {
      problem(field, "match subject '" + text + "' reads '" + p.slots_[static_cast<std::size_t>(slot)].name +
                         "', which is not a discriminant");
      return -1;
    }
  }
  s.domain = {Val::boolean(false), Val::boolean(true)};
  s.names = {"false", "true"};
  s.expr = std::move(*e);
  p.subjects_.push_back(std::move(s));
  return static_cast<int>(p.subjects_.size() - 1);
}

std::optional<ShapeDecl> PlanBuilder::compile_shape(const std::string& text, const std::string& field) {
  CompiledPlan& p = *plan_;
  const OpSpec& spec = p.spec_;
  Ast root;
  try {
    root = expr::parse_expression(text);
  } catch (const ValueError& e) {
    problem(field, "'" + text + "': " + e.what());
    return std::nullopt;
  }
  bool ok = true;
  const std::function<std::vector<Expansion>(const Ast&, int)> expand = [&](const Ast& a, int depth) {
    std::vector<Expansion> out;
    if (a.type == AstType::List) {
      out.push_back({{}, a});
      return out;
    }
    const auto fam_it = a.type == AstType::Subscript && a.kids[0].type == AstType::Name
                            ? std::find(family_names_.begin(), family_names_.end(), a.kids[0].text)
                            : family_names_.end();
    if (fam_it == family_names_.end() || depth > 16) {
      problem(field, "'" + text + "': a shape is a list such as [M, K] or a type family application such as Mat[t, M, K]");
      ok = false;
      return out;
    }
    const std::size_t f = static_cast<std::size_t>(fam_it - family_names_.begin());
    family_used_[f] = true;
    if (!family_ok_[f]) {
      ok = false;
      return out;
    }
    const auto& fam = spec.types[f];
    if (a.kids.size() - 1 != fam.params.size()) {
      problem(field, "'" + text + "': " + fam.name + " takes " + std::to_string(fam.params.size()) + " arguments, got " +
                         std::to_string(a.kids.size() - 1));
      ok = false;
      return out;
    }
    std::vector<std::pair<std::string, Ast>> map;
    for (std::size_t k = 0; k < fam.params.size(); ++k) map.emplace_back(fam.params[k].first, a.kids[k + 1]);
    std::vector<int> subject;
    for (const std::string& m : fam.match) {
      const auto it = std::find_if(map.begin(), map.end(), [&](const auto& pr) { return pr.first == m; });
      const int id = subject_id(it->second, field);
      if (id < 0) {
        ok = false;
        return out;
      }
      subject.push_back(id);
    }
    for (const auto& c : fam.cases) {
      std::vector<std::pair<int, int>> assignment;
      for (std::size_t k = 0; k < subject.size(); ++k) {
        assignment.emplace_back(subject[k], std::get<bool>(c.when[k]) ? 1 : 0);
      }
      Ast applied;
      try {
        applied = substitute(expr::parse_expression(c.is), map);
      } catch (const ValueError& e) {
        problem(field, "'" + text + "': " + fam.name + "'s case '" + c.is + "': " + e.what());
        ok = false;
        return out;
      }
      for (Expansion& inner : expand(applied, depth + 1)) {
        bool consistent = true;
        std::vector<std::pair<int, int>> merged = assignment;
        for (const auto& [sid, v] : inner.assignment) {
          const auto it = std::find_if(merged.begin(), merged.end(), [sid = sid](const auto& pr) { return pr.first == sid; });
          if (it == merged.end()) {
            merged.emplace_back(sid, v);
          } else if (it->second != v) {
            consistent = false;
          }
        }
        if (consistent) out.push_back({std::move(merged), std::move(inner.term)});
      }
    }
    return out;
  };
  std::vector<Expansion> expansions = expand(root, 0);
  if (!ok) return std::nullopt;

  ShapeDecl decl;
  decl.text = text;
  for (const Expansion& e : expansions) {
    for (const auto& [sid, v] : e.assignment) {
      if (std::find(decl.subjects.begin(), decl.subjects.end(), sid) == decl.subjects.end()) decl.subjects.push_back(sid);
    }
  }
  std::sort(decl.subjects.begin(), decl.subjects.end());
  for (const Expansion& e : expansions) {
    ShapeTerm term;
    term.text = expr::to_source(e.term);
    for (const Ast& item : e.term.kids) {
      AxisItem ai;
      ai.text = expr::to_source(item);
      const bool star = item.type == AstType::Star;
      const Ast& inner = star ? item.kids[0] : item;
      std::optional<Expr> ie = compile_ast(inner, expr::to_source(inner), field);
      if (!ie) return std::nullopt;
      if (star) {
        if (ie->root.kind != expr::kind_of(expr::Base::IntList)) {
          problem(field, "'" + text + "': '" + ai.text + "' expands " + expr::kind_name(ie->root.kind) + ", not Seq[Int]");
          return std::nullopt;
        }
        const bool index = ie->root.op == expr::NodeOp::Slot &&
                           p.slots_[static_cast<std::size_t>(ie->root.index)].source == SlotDecl::Source::Index;
        ai.form = index ? AxisItem::Form::Star : AxisItem::Form::StarExpr;
        ai.star_slot = index ? ie->root.index : -1;
      } else {
        if (ie->root.kind != expr::kind_of(expr::Base::Int)) {
          problem(field, "'" + text + "': axis '" + ai.text + "' is " + expr::kind_name(ie->root.kind) + ", not Int");
          return std::nullopt;
        }
        ++term.fixed_axes;
        std::vector<std::string> names;
        names_in(inner, names);
        for (const std::string& n : names) {
          const expr::NameInfo* info = p.scope_.find(n);
          if (info == nullptr || info->what != expr::NameInfo::What::Slot) continue;
          const SlotDecl& d = p.slots_[static_cast<std::size_t>(info->index)];
          if (d.source != SlotDecl::Source::Index || d.kind.base != expr::Base::Int) continue;
          std::optional<LinearAst> lin = linear(inner, n);
          if (!lin) continue;
          AxisItem::Linear l;
          l.slot = info->index;
          l.a = lin->a;
          if (lin->rest) {
            l.rest = compile_ast(*lin->rest, expr::to_source(*lin->rest), field);
            if (!l.rest) return std::nullopt;
          }
          ai.linear.push_back(std::move(l));
        }
      }
      if ((ai.form == AxisItem::Form::Axis || ai.form == AxisItem::Form::StarExpr) && ie->root.op == expr::NodeOp::Slot) {
        const SlotDecl& d = p.slots_[static_cast<std::size_t>(ie->root.index)];
        if (d.source == SlotDecl::Source::Param) p.params_[static_cast<std::size_t>(d.param)].used_as_axis = true;
      }
      ai.expr = std::move(*ie);
      term.items.push_back(std::move(ai));
    }
    if (term.items.size() > 64) {
      problem(field, "'" + text + "': a shape has at most 64 items");
      return std::nullopt;
    }
    std::optional<Expr> whole = compile_ast(e.term, term.text, field);
    if (!whole) return std::nullopt;
    term.whole = std::move(*whole);
    decl.terms.push_back(std::move(term));
  }
  std::size_t combos = 1;
  for (int sid : decl.subjects) combos *= p.subjects_[static_cast<std::size_t>(sid)].domain.size();
  decl.term_of.assign(combos, -1);
  for (std::size_t combo = 0; combo < combos; ++combo) {
    std::vector<int> value(decl.subjects.size());
    std::size_t rest = combo;
    for (std::size_t k = decl.subjects.size(); k-- > 0;) {
      const std::size_t n = p.subjects_[static_cast<std::size_t>(decl.subjects[k])].domain.size();
      value[k] = static_cast<int>(rest % n);
      rest /= n;
    }
    for (std::size_t t = 0; t < expansions.size() && decl.term_of[combo] < 0; ++t) {
      const bool match = std::all_of(expansions[t].assignment.begin(), expansions[t].assignment.end(), [&](const auto& pr) {
        const auto k = std::find(decl.subjects.begin(), decl.subjects.end(), pr.first) - decl.subjects.begin();
        return value[static_cast<std::size_t>(k)] == pr.second;
      });
      if (match) decl.term_of[combo] = static_cast<int>(t);
    }
  }
  return decl;
}

std::optional<DTypeDecl> PlanBuilder::compile_dtype(const std::string& text, const std::string& field) {
  std::optional<Expr> e = compile(text, field);
  if (!e) return std::nullopt;
  if (e->root.kind != expr::kind_of(expr::Base::DType)) {
    problem(field, "'" + text + "' must be a DType, not " + expr::kind_name(e->root.kind));
    return std::nullopt;
  }
  DTypeDecl d;
  d.text = text;
  if (e->root.op == expr::NodeOp::Slot &&
      plan_->slots_[static_cast<std::size_t>(e->root.index)].source == SlotDecl::Source::Index) {
    d.solve_slot = e->root.index;
  }
  d.expr = std::move(*e);
  return d;
}

void PlanBuilder::compile_tensors() {
  CompiledPlan& p = *plan_;
  const OpSpec& s = p.spec_;
  for (TensorDecl& t : p.tensors_) {
    std::string field;
    std::string dtype;
    std::string shape;
    if (t.role == TensorRole::Input) {
      const auto& in = s.inputs[static_cast<std::size_t>(t.position)];
      field = "signature.inputs." + t.name;
      dtype = in.dtype;
      shape = in.shape;
      if (!in.optional_expr.empty()) t.optional_expr = compile_discriminant(in.optional_expr, field + ".optional");
      if (!in.mutated_expr.empty()) t.mutated_expr = compile_discriminant(in.mutated_expr, field + ".mutated");
    } else if (t.role == TensorRole::Construction) {
      const auto it = std::find_if(s.params.begin(), s.params.end(), [&](const auto& prm) { return prm.name == t.name; });
      field = "signature.params." + t.name;
      dtype = it->dtype;
      shape = it->shape;
    } else {
      const auto& out = s.outputs[static_cast<std::size_t>(t.position)];
      field = "signature.outputs." + t.name;
      dtype = out.dtype;
      shape = out.shape;
      if (!out.nullable.empty()) t.nullable = compile_discriminant(out.nullable, field + ".nullable");
    }
    if (std::optional<DTypeDecl> d = compile_dtype(dtype, field + ".dtype")) t.dtype = std::move(*d);
    if (std::optional<ShapeDecl> sh = compile_shape(shape, field + ".shape")) t.shape = std::move(*sh);
    if (t.role == TensorRole::Input && !s.inputs[static_cast<std::size_t>(t.position)].range.empty()) {
      t.range = compile_range(s.inputs[static_cast<std::size_t>(t.position)].range, dtype, t.dtype.solve_slot,
                              field + ".range");
    }
  }
}

std::optional<Expr> PlanBuilder::compile_range(const std::string& source, const std::string& dtype, int dtype_slot,
                                               const std::string& field) {
  const auto integral = [](DType d) { return !is_floating(d) && d != DType::bool_; };
  DType d;
  bool integer_input = try_parse_dtype(dtype, d) && integral(d);
  if (!integer_input && dtype_slot >= 0) {
    const std::vector<DType>& set = plan_->slots_[static_cast<std::size_t>(dtype_slot)].dtypes;
    integer_input = !set.empty() && std::all_of(set.begin(), set.end(), integral);
  }
  if (!integer_input) {
    problem(field, "a range bounds the values of an integer input: its dtype must be one integer dtype or a DType "
                   "index of integer dtypes only, and this input's dtype is '" + dtype + "'");
    return std::nullopt;
  }
  std::optional<Expr> e = compile(source, field);
  if (!e) return e;
  const auto& star = e->root.star;
  if (e->root.op != expr::NodeOp::List || e->root.kids.size() != 2 || std::find(star.begin(), star.end(), 1) != star.end()) {
    problem(field, "'" + source + "' must be a list of two integers, [low, high]");
    return std::nullopt;
  }
  return e;
}

}  // namespace tileops::detail
