// Static checks of workload rows (the manifest's `workloads`): labels and case ids, the indices each row
// gives against those its branch uses, and instantiation re-inferred through the call check.
#include <algorithm>
#include <map>
#include <regex>

#include "signature/plan_builder.hpp"

namespace tileops::detail {
namespace {

const SlotDecl* find_slot(const std::vector<SlotDecl>& slots, const std::string& name) {
  for (const SlotDecl& d : slots) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

// A recorded index value as the Value a workload row gives.
Value as_value(const IndexValue& v) {
  return std::visit(
      [](const auto& x) -> Value {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, Shape>) {
          return std::vector<std::int64_t>(x.begin(), x.end());
        } else {
          return x;
        }
      },
      v);
}

}  // namespace

void PlanBuilder::check_workloads() {
  CompiledPlan& p = *plan_;
  const OpSpec& s = p.spec_;
  static const std::regex label_re("[A-Za-z0-9._-]{1,24}");
  std::map<std::string, std::size_t> ids;
  std::vector<int> passed(p.tensors_.size(), 0);
  std::vector<int> omitted(p.tensors_.size(), 0);
  for (std::size_t r = 0; r < s.workloads.size(); ++r) {
    const manifest::WorkloadRow& row = s.workloads[r];
    const std::string field = "workloads[" + std::to_string(r) + "]";
    const std::size_t before = problems_.size();
    if (!std::regex_match(row.label, label_re)) {
      problem(field + ".label", "'" + row.label + "' must be 1 to 24 characters of [A-Za-z0-9._-]");
    }
    for (const auto& [key, value] : row.values) {
      const SlotDecl* d = find_slot(p.slots_, key);
      if (d != nullptr && d->source == SlotDecl::Source::Param) continue;
      if (d != nullptr && d->source == SlotDecl::Source::Index && d->kind.base != expr::Base::DType) continue;
      if (d != nullptr && d->source == SlotDecl::Source::Index) {
        problem(field + "." + key, "a DType index is given in dtype_cases, not as a key of the row");
      } else if (d != nullptr) {
        problem(field + "." + key, "'" + key + "' is a let entry; rows do not give let entries");
      } else {
        problem(field + "." + key, "'" + key + "' is neither a parameter nor a forall index");
      }
    }
    for (const std::string& name : row.some) {
      const auto it = std::find_if(p.tensors_.begin(), p.tensors_.end(), [&](const TensorDecl& t) { return t.name == name; });
      if (it == p.tensors_.end() || it->role == TensorRole::Output || !it->optional) {
        problem(field + ".some", "'" + name + "' is not a tensor declared optional: true");
      }
    }
    if (problems_.size() != before) continue;

    // The row's branch, and the indices it uses.
    WorkloadCase first;
    try {
      first = p.instantiate_case(r, 0);
    } catch (const ValueError& e) {
      problem(field, e.what());
      continue;
    }
    try {
      CheckState f;
      p.init_state(f);
      ParamMap all;
      for (const ParamInfo& prm : p.params_) {
        if (prm.is_tensor) continue;
        const Value* v = first.params.find(prm.name);
        all.set(prm.name, v != nullptr ? *v : *prm.default_value);
      }
      for (const ParamInfo& prm : p.params_) {
        if (!prm.is_tensor) f.slots[static_cast<std::size_t>(prm.slot)] = expr::val_from_value(all.at(prm.name));
      }
      for (int i = 0; i < p.n_inputs_; ++i) f.present[static_cast<std::size_t>(i)] = first.inputs[static_cast<std::size_t>(i)].has_value();
      for (const ParamInfo& prm : p.params_) {
        if (prm.is_tensor) f.present[static_cast<std::size_t>(prm.tensor)] = first.params.contains(prm.name);
      }
      bool excluded = false;
      for (std::size_t i = 0; i < p.rules_.size(); ++i) {
        if (p.rules_[i].domain && !expr::evaluate_bool(p.rules_[i].expr.root, f.env())) {
          problem(field, "the row's parameters and tensors are excluded by shape_rules[" + std::to_string(i) + "] '" +
                             p.rules_[i].text + "'");
          excluded = true;
        }
      }
      if (excluded) continue;
      p.select_branches(f);
      for (int o = 0; o < p.n_outputs_; ++o) {
        const TensorDecl& t = p.tensors_[static_cast<std::size_t>(p.output_tensor(o))];
        f.present[static_cast<std::size_t>(p.output_tensor(o))] = !t.nullable || expr::evaluate_bool(t.nullable->root, f.env());
      }
      for (std::size_t id = 0; id < p.tensors_.size(); ++id) {
        if (p.tensors_[id].role == TensorRole::Output || !p.tensors_[id].optional) continue;
        (f.present[id] ? passed : omitted)[id] = 1;
      }
      std::set<int> used;
      for (std::size_t id = 0; id < p.tensors_.size(); ++id) {
        if (!f.present[id]) continue;
        const TensorDecl& t = p.tensors_[id];
        collect_reads(p.term(t, f)->whole.root, f, used);
        collect_reads(t.dtype.expr.root, f, used);
      }
      for (const Rule& rule : p.rules_) collect_reads(rule.expr.root, f, used);
      collect_reads(p.flops_.root, f, used);
      if (p.bytes_) collect_reads(p.bytes_->root, f, used);
      for (auto it = p.lets_.rbegin(); it != p.lets_.rend(); ++it) {
        if (used.count(it->slot)) collect_reads(it->expr.root, f, used);
      }
      std::vector<std::string> used_dtypes;
      for (int slot : used) {
        const SlotDecl& d = p.slots_[static_cast<std::size_t>(slot)];
        if (d.source != SlotDecl::Source::Index) continue;
        if (d.kind.base == expr::Base::DType) {
          used_dtypes.push_back(d.name);
          continue;
        }
        const bool given = std::any_of(row.values.begin(), row.values.end(), [&](const auto& kv) { return kv.first == d.name; });
        if (!given) problem(field, "does not give index '" + d.name + "', which the row's branch uses");
      }
      for (const auto& [key, value] : row.values) {
        const SlotDecl* d = find_slot(p.slots_, key);
        if (d->source == SlotDecl::Source::Index && !used.count(static_cast<int>(d - p.slots_.data()))) {
          problem(field + "." + key, "gives index '" + key + "', which the row's branch does not use");
        }
      }
      if (!used_dtypes.empty() && row.dtype_cases.empty()) {
        std::string names;
        for (const std::string& n : used_dtypes) names += (names.empty() ? "" : ", ") + n;
        problem(field + ".dtype_cases", "is required: the row's branch uses " + names);
      }
      if (used_dtypes.empty() && !row.dtype_cases.empty()) {
        problem(field + ".dtype_cases", "assigns dtypes, but the row's branch uses no DType index");
      }
      for (std::size_t c = 0; c < row.dtype_cases.size(); ++c) {
        std::vector<std::string> keys;
        for (const auto& kv : row.dtype_cases[c]) keys.push_back(kv.first);
        std::sort(keys.begin(), keys.end());
        std::vector<std::string> want = used_dtypes;
        std::sort(want.begin(), want.end());
        if (keys != want) {
          std::string names;
          for (const std::string& n : want) names += (names.empty() ? "" : ", ") + n;
          problem(field + ".dtype_cases[" + std::to_string(c) + "]", "must assign exactly the DType indices the branch uses (" +
                                                                         names + ")");
        }
      }
    } catch (const ValueError& e) {
      problem(field, e.what());
    }
    if (problems_.size() != before) continue;

    // Every case instantiates and re-infers to the row's values.
    const std::size_t n_cases = std::max<std::size_t>(1, row.dtype_cases.size());
    for (std::size_t c = 0; c < n_cases; ++c) {
      WorkloadCase wc;
      try {
        wc = p.instantiate_case(r, c);
      } catch (const ValueError& e) {
        problem(field, e.what());
        continue;
      }
      if (const auto [it, fresh] = ids.emplace(wc.id, r); !fresh) {
        problem(field, "case id '" + wc.id + "' repeats a case of workloads[" + std::to_string(it->second) + "]");
      }
      try {
        ConstructionState state = p.check_construction(wc.params);
        state.meta_calls = true;
        std::vector<Tensor> inputs;
        for (const auto& spec : wc.inputs) {
          inputs.push_back(spec ? Tensor::empty(spec->shape, spec->dtype, Device::meta()) : Tensor());
        }
        CallCheck check;
        SignatureCall record;
        p.check_call(state, CallArgs{inputs, Tensor()}, check, record);
        for (const auto& [key, value] : row.values) {
          const SlotDecl* d = find_slot(p.slots_, key);
          if (d->source != SlotDecl::Source::Index) continue;
          const IndexValue* solved = record.index(key);
          if (solved == nullptr || !value_equal(as_value(*solved), value)) {
            problem(field + "." + key, "the row gives " + key + " = " + value_str(value) + ", but its inputs solve " + key +
                                           " = " + (solved ? value_str(*solved) : std::string("nothing")));
          }
        }
        p.eval_roofline(record);
      } catch (const Error& e) {
        problem(field, "case '" + wc.id + "': " + e.what());
      }
    }
  }

  // Rows that share a label differ only in dtype.
  for (std::size_t r = 0; r < s.workloads.size(); ++r) {
    for (std::size_t q = 0; q < r; ++q) {
      const auto& a = s.workloads[r];
      const auto& b = s.workloads[q];
      if (a.label != b.label) continue;
      const auto non_dtype = [&p](const manifest::WorkloadRow& row) {
        std::vector<std::pair<std::string, Value>> v;
        for (const auto& kv : row.values) {
          const SlotDecl* d = find_slot(p.slots_, kv.first);
          if (d != nullptr && d->kind.base == expr::Base::DType) continue;
          v.push_back(kv);
        }
        std::sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
        return v;
      };
      const auto va = non_dtype(a);
      const auto vb = non_dtype(b);
      const bool same = va.size() == vb.size() && a.some == b.some &&
                        std::equal(va.begin(), va.end(), vb.begin(), [](const auto& x, const auto& y) {
                          return x.first == y.first && value_equal(x.second, y.second);
                        });
      if (!same) {
        problem("workloads[" + std::to_string(r) + "].label", "shares label '" + a.label + "' with workloads[" +
                                                                  std::to_string(q) + "] but differs in more than dtype");
      }
    }
  }
  if (s.status != "implemented") return;
  for (std::size_t id = 0; id < p.tensors_.size(); ++id) {
    const TensorDecl& t = p.tensors_[id];
    if (t.role == TensorRole::Output || !t.optional) continue;
    const std::string field = (t.role == TensorRole::Input ? "signature.inputs." : "signature.params.") + t.name + ".optional";
    if (!passed[id]) problem(field, "no workload row passes '" + t.name + "' (list it in a row's some)");
    if (!omitted[id]) problem(field, "every workload row passes '" + t.name + "'; an implemented op's rows also omit it");
  }
}

}  // namespace tileops::detail
