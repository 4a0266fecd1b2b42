// The construction check: parameter values, construction-time tensors and the refinements
// parameters alone decide.
#include <algorithm>

#include "join.hpp"
#include "signature/compiled_plan.hpp"
#include "signature/rules.hpp"

namespace tileops::detail {
namespace {

std::string names_of(const std::vector<ParamInfo>& params) {
  const std::string s = join_with(params, [](std::string& out, const ParamInfo& p) { out += p.name; });
  return s.empty() ? "(none)" : s;
}

}  // namespace

ConstructionState CompiledPlan::check_construction(const ParamMap& given) const {
  for (const auto& [name, value] : given) {
    if (std::none_of(params_.begin(), params_.end(), [&](const ParamInfo& p) { return p.name == name; })) {
      throw TypeError(message("unknown parameter '" + name + "'; the parameters are " + names_of(params_)));
    }
  }
  ConstructionState st;
  for (const ParamInfo& p : params_) {
    const Value* v = given.find(p.name);
    if (p.is_tensor) {
      const TensorDecl& t = tensors_[static_cast<std::size_t>(p.tensor)];
      if (v == nullptr || std::holds_alternative<std::monostate>(*v) ||
          (std::holds_alternative<Tensor>(*v) && !std::get<Tensor>(*v).defined())) {
        if (!t.optional) throw TypeError(message("parameter '" + p.name + "' (a tensor) is required but was not given"));
        st.params.set(p.name, std::monostate{});
        continue;
      }
      if (!std::holds_alternative<Tensor>(*v)) {
        throw TypeError(message("parameter '" + p.name + "' must be a tensor, got " + std::string(value_kind(*v)) + " " +
                                value_str(*v)));
      }
      const Tensor& tensor = std::get<Tensor>(*v);
      if (t.device_cpu && !tensor.device().is_cpu() && !tensor.device().is_meta()) {
        throw TypeError(message("parameter '" + p.name + "' must be on cpu (declared device: cpu), but is on " +
                                tensor.device().str()));
      }
      st.params.set(p.name, *v);
      continue;
    }
    if (v == nullptr && !p.default_value) {
      throw TypeError(message("missing required parameter '" + p.name + "' (" + p.type.text + ")"));
    }
    const Value& raw = v != nullptr ? *v : *p.default_value;
    std::optional<Value> converted = p.type.convert(raw);
    if (!converted) {
      throw TypeError(message("parameter '" + p.name + "' = " + value_str(raw) + " (" + std::string(value_kind(raw)) +
                              ") is not of type " + p.type.text));
    }
    st.params.set(p.name, std::move(*converted));
  }

  CheckState f;
  init_state(f);
  boost::container::small_vector<std::pair<int, const Tensor*>, 4> held;
  for (std::size_t k = 0; k < params_.size(); ++k) {
    const ParamInfo& p = params_[k];
    const Value& v = st.params.items()[k].second;
    if (p.is_tensor) {
      if (std::holds_alternative<Tensor>(v)) {
        f.present[static_cast<std::size_t>(p.tensor)] = 1;
        held.emplace_back(p.tensor, &std::get<Tensor>(v));
      }
      continue;
    }
    f.slots[static_cast<std::size_t>(p.slot)] = expr::val_from_value(v);
    if (p.used_as_axis) {
      const bool negative = std::holds_alternative<std::int64_t>(v)
                                ? std::get<std::int64_t>(v) < 0
                                : std::holds_alternative<std::vector<std::int64_t>>(v) &&
                                      std::any_of(std::get<std::vector<std::int64_t>>(v).begin(),
                                                  std::get<std::vector<std::int64_t>>(v).end(),
                                                  [](std::int64_t d) { return d < 0; });
      if (negative) {
        throw ValueError(message("parameter '" + p.name + "' = " + value_str(v) +
                                 " gives a tensor axis and must not be negative"));
      }
    }
  }
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    if (rules_[i].params_only) check_rule(i, f);
  }
  compute_lets(f);
  if (!held.empty()) {
    select_branches(f, true);
    unify_tensors({held.data(), held.size()}, f);
  }
  // Rules over let entries that the parameters (and construction tensors) already settle, such
  // as a pooling window's per-axis sizes, fail here rather than at the first call.
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    const Rule& r = rules_[i];
    const bool reads_inputs = std::any_of(r.expr.tensors.begin(), r.expr.tensors.end(),
                                          [this](int t) { return tensors_[static_cast<std::size_t>(t)].role != TensorRole::Construction; });
    if (!r.params_only && !reads_inputs && rule_ready(r, f)) check_rule(i, f);
  }

  st.slots.reserve(slots_.size());
  st.slot_source.reserve(slots_.size());
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    const Val& v = f.slots[s];
    st.slots.push_back(expr::AsIndexValue{v});
    st.slot_source.push_back(v.known() ? f.source[s] : std::int16_t{-2});
    if (slots_[s].source != SlotDecl::Source::Param && v.known()) {
      st.indices.push_back({slots_[s].name, st.slots.back()});
    }
  }
  return st;
}

}  // namespace tileops::detail
