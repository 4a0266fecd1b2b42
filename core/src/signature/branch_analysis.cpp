// Static analysis over every combination of discriminant values, at plan compilation: type family
// coverage, solvability of every index on every branch, and the effect branches.
#include <algorithm>
#include <cctype>

#include "signature/expr/intern.hpp"
#include "signature/plan_builder.hpp"

namespace tileops::detail {
namespace {

constexpr std::size_t kMaxCombinations = 4096;

void subtree_slots(const expr::Node& n, std::vector<int>& out) {
  if (n.op == expr::NodeOp::Slot || n.op == expr::NodeOp::PresentSlot) out.push_back(n.index);
  for (const expr::Node& k : n.kids) subtree_slots(k, out);
}

bool decidable(const expr::Node& n, const CheckState& f) {
  std::vector<int> slots;
  subtree_slots(n, slots);
  return std::all_of(slots.begin(), slots.end(), [&f](int s) { return f.slots[static_cast<std::size_t>(s)].known(); });
}

std::string snake_case(const std::string& name) {
  std::string s;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (std::isupper(static_cast<unsigned char>(c)) && i > 0) {
      const char prev = name[i - 1];
      const bool next_lower = i + 1 < name.size() && std::islower(static_cast<unsigned char>(name[i + 1]));
      if (std::islower(static_cast<unsigned char>(prev)) || std::isdigit(static_cast<unsigned char>(prev)) ||
          (std::isupper(static_cast<unsigned char>(prev)) && next_lower)) {
        s += '_';
      }
    }
    s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return s;
}

// A discriminant the analysis enumerates.
struct Variable {
  enum class Kind : std::uint8_t { Slot, Presence, Out };
  Kind kind = Kind::Slot;
  int index = -1;
  std::vector<Val> domain;
};

}  // namespace

void PlanBuilder::collect_reads(const expr::Node& n, const CheckState& f, std::set<int>& out) const {
  switch (n.op) {
    case expr::NodeOp::Slot:
    case expr::NodeOp::PresentSlot: out.insert(n.index); return;
    case expr::NodeOp::And:
    case expr::NodeOp::Or: {
      const bool stop_on = n.op == expr::NodeOp::Or;
      for (const expr::Node& k : n.kids) {
        if (!decidable(k, f)) {
          collect_reads(k, f, out);
          continue;
        }
        if (expr::evaluate_bool(k, f.env()) == stop_on) return;
      }
      return;
    }
    case expr::NodeOp::IfElse:
      if (decidable(n.kids[0], f)) {
        collect_reads(expr::evaluate_bool(n.kids[0], f.env()) ? n.kids[1] : n.kids[2], f, out);
        return;
      }
      break;
    default: break;
  }
  for (const expr::Node& k : n.kids) collect_reads(k, f, out);
}

void PlanBuilder::analyse_branches() {
  CompiledPlan& p = *plan_;
  std::vector<Variable> vars;
  std::vector<int> finite;
  const auto note = [&](const Expr& e) {
    for (int s : e.slots) {
      if (finite_param_slot(s) && std::find(finite.begin(), finite.end(), s) == finite.end()) finite.push_back(s);
    }
  };
  for (const Subject& s : p.subjects_) note(s.expr);
  for (const TensorDecl& t : p.tensors_) {
    if (t.optional_expr) note(*t.optional_expr);
    if (t.mutated_expr) note(*t.mutated_expr);
    if (t.nullable) note(*t.nullable);
  }
  for (const Rule& r : p.rules_) {
    if (r.domain) note(r.expr);
  }
  std::sort(finite.begin(), finite.end());
  for (int s : finite) {
    const manifest::ParamType& type = p.params_[static_cast<std::size_t>(p.slots_[static_cast<std::size_t>(s)].param)].type;
    Variable v;
    v.index = s;
    if (type.boolean) {
      v.domain = {Val::boolean(false), Val::boolean(true)};
    } else if (type.str) {
      for (const std::string& l : type.literals) v.domain.push_back(Val::str(expr::intern(l)));
    } else {
      for (DType d : type.dtypes) v.domain.push_back(Val::dtype(d));
    }
    if (type.none) v.domain.push_back(Val::none());
    vars.push_back(std::move(v));
  }
  for (std::size_t id = 0; id < p.tensors_.size(); ++id) {
    const TensorDecl& t = p.tensors_[id];
    if (t.role != TensorRole::Output && t.optional) {
      vars.push_back({Variable::Kind::Presence, static_cast<int>(id), {Val::boolean(false), Val::boolean(true)}});
    }
  }
  if (p.out_output_ >= 0) vars.push_back({Variable::Kind::Out, -1, {Val::boolean(false), Val::boolean(true)}});
  std::size_t total = 1;
  for (const Variable& v : vars) {
    total *= v.domain.size();
    if (total > kMaxCombinations) {
      problem("signature", "has more than " + std::to_string(kMaxCombinations) +
                               " combinations of discriminant values; split the op");
      return;
    }
  }

  std::set<std::string> reported;
  const auto report_once = [&](const std::string& field, const std::string& reason) {
    if (reported.insert(field).second) problem(field, reason);
  };
  const auto field_of = [](const TensorDecl& t) {
    return std::string(t.role == TensorRole::Input ? "signature.inputs." : t.role == TensorRole::Output ? "signature.outputs." : "signature.params.") +
           t.name;
  };
  std::vector<EffectBranch> effects;
  for (std::size_t point = 0; point < total; ++point) {
    CheckState f;
    p.init_state(f);
    std::size_t rest = point;
    bool out_passed = false;
    std::string where;
    for (std::size_t k = vars.size(); k-- > 0;) {
      const Variable& v = vars[k];
      const Val& value = v.domain[rest % v.domain.size()];
      rest /= v.domain.size();
      std::string name;
      if (v.kind == Variable::Kind::Slot) {
        f.slots[static_cast<std::size_t>(v.index)] = value;
        name = p.slots_[static_cast<std::size_t>(v.index)].name;
      } else if (v.kind == Variable::Kind::Presence) {
        f.present[static_cast<std::size_t>(v.index)] = value.b;
        name = "present(" + p.tensors_[static_cast<std::size_t>(v.index)].name + ")";
      } else {
        out_passed = value.b;
        name = "out passed";
      }
      where = name + " = " + expr::val_str(value) + (where.empty() ? "" : ", ") + where;
    }
    where = where.empty() ? "on every call" : "when " + where;
    for (std::size_t id = 0; id < p.tensors_.size(); ++id) {
      const TensorDecl& t = p.tensors_[id];
      if (t.role != TensorRole::Output && !t.optional && !t.optional_expr) f.present[id] = 1;
    }
    bool excluded = false;
    try {
      for (TensorDecl& t : p.tensors_) {
        if (t.optional_expr) f.present[static_cast<std::size_t>(&t - p.tensors_.data())] = expr::evaluate_bool(t.optional_expr->root, f.env());
      }
      for (const Rule& r : p.rules_) {
        if (r.domain && !expr::evaluate_bool(r.expr.root, f.env())) excluded = true;
      }
      if (excluded) continue;
      p.select_branches(f);
    } catch (const ValueError& e) {
      problem("signature", std::string("evaluating the discriminants failed ") + where + ": " + e.what());
      return;
    }
    for (int o = 0; o < p.n_outputs_; ++o) {
      const TensorDecl& t = p.tensors_[static_cast<std::size_t>(p.output_tensor(o))];
      f.present[static_cast<std::size_t>(p.output_tensor(o))] = !t.nullable || expr::evaluate_bool(t.nullable->root, f.env());
    }

    // Type family coverage.
    bool gap = false;
    for (const TensorDecl& t : p.tensors_) {
      if (!f.present[static_cast<std::size_t>(&t - p.tensors_.data())] || p.term(t, f) != nullptr) continue;
      std::string values;
      for (int sid : t.shape.subjects) {
        const Subject& s = p.subjects_[static_cast<std::size_t>(sid)];
        values += (values.empty() ? "" : ", ") + s.text + " = " + s.names[f.subject[static_cast<std::size_t>(sid)]];
      }
      report_once(field_of(t) + ".shape", "the type family cases of " + t.shape.text + " have a gap: no case applies when " + values);
      gap = true;
    }
    if (gap) continue;

    // Solvability: params are known; unification solves what it can, as at run time.
    std::vector<char> known(p.slots_.size(), 0);
    for (std::size_t s = 0; s < p.slots_.size(); ++s) known[s] = p.slots_[s].source == SlotDecl::Source::Param;
    const auto all_known = [&known](const Expr& e) {
      return std::all_of(e.slots.begin(), e.slots.end(), [&known](int s) { return known[static_cast<std::size_t>(s)] != 0; });
    };
    struct Work {
      const TensorDecl* t;
      const ShapeTerm* term;
      std::uint64_t items;
      bool dtype;
    };
    std::vector<Work> work;
    for (const TensorDecl& t : p.tensors_) {
      if (t.role == TensorRole::Output || !f.present[static_cast<std::size_t>(&t - p.tensors_.data())]) continue;
      const ShapeTerm* term = p.term(t, f);
      const std::size_t n = term->items.size();
      work.push_back({&t, term, n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1, true});
    }
    bool progress = true;
    while (progress) {
      progress = false;
      for (Work& w : work) {
        const DTypeDecl& d = w.t->dtype;
        if (w.dtype && d.solve_slot >= 0 && !known[static_cast<std::size_t>(d.solve_slot)]) {
          known[static_cast<std::size_t>(d.solve_slot)] = 1;
          w.dtype = false;
          progress = true;
        } else if (w.dtype && all_known(d.expr)) {
          w.dtype = false;
          progress = true;
        }
        int unknown_stars = 0;
        for (const AxisItem& item : w.term->items) {
          if (item.form == AxisItem::Form::Star && !known[static_cast<std::size_t>(item.star_slot)]) ++unknown_stars;
          if (item.form == AxisItem::Form::StarExpr && !all_known(item.expr)) ++unknown_stars;
        }
        if (unknown_stars > 1) continue;
        for (std::size_t k = 0; k < w.term->items.size(); ++k) {
          const std::uint64_t bit = std::uint64_t{1} << k;
          if ((w.items & bit) == 0) continue;
          const AxisItem& item = w.term->items[k];
          bool done = false;
          if (item.form == AxisItem::Form::Star) {
            known[static_cast<std::size_t>(item.star_slot)] = 1;
            done = true;
          } else if (all_known(item.expr)) {
            done = true;
          } else if (item.form == AxisItem::Form::Axis) {
            std::vector<int> unknown;
            for (int s : item.expr.slots) {
              if (!known[static_cast<std::size_t>(s)]) unknown.push_back(s);
            }
            for (const AxisItem::Linear& lin : item.linear) {
              if (unknown.size() == 1 && lin.slot == unknown[0]) {
                known[static_cast<std::size_t>(lin.slot)] = 1;
                done = true;
              }
            }
          }
          if (done) {
            w.items &= ~bit;
            progress = true;
          }
        }
      }
      for (const LetInfo& l : p.lets_) {
        if (!known[static_cast<std::size_t>(l.slot)] && all_known(l.expr)) {
          known[static_cast<std::size_t>(l.slot)] = 1;
          progress = true;
        }
      }
    }
    for (const Work& w : work) {
      if (w.dtype) {
        report_once(field_of(*w.t) + ".dtype", "'" + w.t->dtype.text + "' cannot be resolved " + where +
                                                   ": it reads an index no tensor determines");
      }
      if (w.items != 0) {
        report_once(field_of(*w.t) + ".shape", "'" + w.t->shape.text + "' cannot be resolved " + where +
                                                   ": an axis reads more than one unknown index, or an index no tensor determines");
      }
    }
    std::set<int> needed;
    std::vector<std::pair<std::string, const Expr*>> readers;
    for (int o = 0; o < p.n_outputs_; ++o) {
      const TensorDecl& t = p.tensors_[static_cast<std::size_t>(p.output_tensor(o))];
      if (!f.present[static_cast<std::size_t>(p.output_tensor(o))]) continue;
      readers.emplace_back("output '" + t.name + "'", &p.term(t, f)->whole);
      readers.emplace_back("output '" + t.name + "'", &t.dtype.expr);
    }
    for (const Rule& r : p.rules_) {
      if (!r.domain) readers.emplace_back("shape rule '" + r.text + "'", &r.expr);
    }
    readers.emplace_back("roofline.flops", &p.flops_);
    if (p.bytes_) readers.emplace_back("roofline.bytes", &*p.bytes_);
    for (const auto& [who, e] : readers) {
      std::set<int> reads;
      collect_reads(e->root, f, reads);
      std::vector<int> queue(reads.begin(), reads.end());
      while (!queue.empty()) {
        const int s = queue.back();
        queue.pop_back();
        const SlotDecl& d = p.slots_[static_cast<std::size_t>(s)];
        if (d.source == SlotDecl::Source::Let && !known[static_cast<std::size_t>(s)]) {
          for (const LetInfo& l : p.lets_) {
            if (l.slot != s) continue;
            std::set<int> inner;
            collect_reads(l.expr.root, f, inner);
            for (int i : inner) {
              if (reads.insert(i).second) queue.push_back(i);
            }
          }
        }
        if (d.source == SlotDecl::Source::Index && !known[static_cast<std::size_t>(s)]) {
          report_once("signature.forall." + d.name, "index '" + d.name + "' cannot be solved " + where + ": " + who +
                                                        " reads it, but no input determines it");
        }
      }
    }

    // The effect branch.
    std::uint64_t key = 0;
    for (int i = 0; i < p.n_inputs_; ++i) {
      const TensorDecl& t = p.input(i);
      if (f.present[static_cast<std::size_t>(i)] && (t.mutated || (t.mutated_expr && expr::evaluate_bool(t.mutated_expr->root, f.env())))) {
        key |= std::uint64_t{1} << i;
      }
    }
    if (out_passed) key |= std::uint64_t{1} << p.n_inputs_;
    for (int o = 0; o < p.n_outputs_; ++o) {
      if (!f.present[static_cast<std::size_t>(p.output_tensor(o))]) key |= std::uint64_t{1} << (p.n_inputs_ + 1 + o);
    }
    if (std::none_of(effects.begin(), effects.end(), [key](const EffectBranch& b) { return b.key == key; })) {
      effects.push_back({key, ""});
    }
  }
  if (effects.empty()) {
    problem("signature.shape_rules", "the domain restrictions exclude every call");
    return;
  }

  // Effect branch names, fewest effects first.
  std::stable_sort(effects.begin(), effects.end(), [](const EffectBranch& a, const EffectBranch& b) {
    return __builtin_popcountll(a.key) < __builtin_popcountll(b.key);
  });
  std::string snake = snake_case(p.spec_.name.substr(0, p.spec_.name.size() - 2));
  const std::string& fam = p.spec_.family;
  const std::string base =
      "tileops::" + (snake == fam || snake.rfind(fam + "_", 0) == 0 ? snake : fam + "_" + snake);
  for (EffectBranch& b : effects) {
    b.name = base;
    for (int i = 0; i < p.n_inputs_; ++i) {
      if (b.key & (std::uint64_t{1} << i)) b.name += "_writes_" + p.input(i).name;
    }
    if (b.key & (std::uint64_t{1} << p.n_inputs_)) b.name += "_out";
    for (int o = 0; o < p.n_outputs_; ++o) {
      if (b.key & (std::uint64_t{1} << (p.n_inputs_ + 1 + o))) {
        b.name += "_without_" + p.tensors_[static_cast<std::size_t>(p.output_tensor(o))].name;
      }
    }
  }
  p.effects_ = std::move(effects);
  if (p.n_inputs_ > 0 && !p.spec_.composition) {
    for (const EffectBranch& b : p.effects_) {
      p.compile_op_names_.push_back(b.name);
      BoundaryOperator& op = p.boundary_operators_.emplace_back();
      op.name = b.name;
      for (int i = 0; i < p.n_inputs_; ++i) {
        if (b.key & (std::uint64_t{1} << i)) op.written.push_back(static_cast<std::size_t>(i));
      }
      op.out = (b.key & (std::uint64_t{1} << p.n_inputs_)) != 0;
      for (int o = 0; o < p.n_outputs_; ++o) {
        if (b.key & (std::uint64_t{1} << (p.n_inputs_ + 1 + o))) op.null_outputs.push_back(static_cast<std::size_t>(o));
      }
    }
  }

  // Branch keys: one per combination of all match subjects' values.
  std::size_t keys = 1;
  for (const Subject& s : p.subjects_) keys *= s.domain.size();
  if (keys > kMaxCombinations) {
    problem("signature.types", "type family subjects have more than " + std::to_string(kMaxCombinations) + " combinations");
    return;
  }
  if (!p.subjects_.empty()) {
    for (std::size_t k = 0; k < keys; ++k) {
      std::string key;
      std::size_t rest = k;
      for (std::size_t s = p.subjects_.size(); s-- > 0;) {
        const Subject& sub = p.subjects_[s];
        key = sub.text + "=" + sub.names[rest % sub.domain.size()] + (key.empty() ? "" : ",") + key;
        rest /= sub.domain.size();
      }
      p.branch_keys_.push_back(std::move(key));
    }
  }
  for (const ParamInfo& prm : p.params_) p.param_names_.push_back(prm.name);
  for (std::size_t k = 0; k < p.params_.size(); ++k) {
    const ParamInfo& prm = p.params_[k];
    if (prm.is_tensor && !p.tensors_[static_cast<std::size_t>(prm.tensor)].device_cpu) p.call_device_params_.push_back(k);
  }
  for (int i = 0; i < p.n_inputs_; ++i) p.input_names_.push_back(p.input(i).name);
  for (int o = 0; o < p.n_outputs_; ++o) p.output_names_.push_back(p.tensors_[static_cast<std::size_t>(p.output_tensor(o))].name);
}

}  // namespace tileops::detail
