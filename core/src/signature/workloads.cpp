// Workload rows (the manifest's `workloads`) instantiated into cases.
#include <algorithm>

#include "signature/compiled_plan.hpp"

namespace tileops::detail {
namespace {

const Value* row_value(const manifest::WorkloadRow& row, std::string_view name) {
  for (const auto& [k, v] : row.values) {
    if (k == name) return &v;
  }
  return nullptr;
}

}  // namespace

ValueRange CompiledPlan::value_range(const TensorDecl& t, CheckState& f) const {
  const std::string what = tensor_label(static_cast<int>(&t - tensors_.data()));
  Val bounds;
  try {
    bounds = expr::evaluate(t.range->root, f.env());
  } catch (const expr::UnsetSlotError& e) {
    throw ValueError("does not give index '" + slots_[static_cast<std::size_t>(e.slot())].name + "', which the range of " +
                     what + " reads");
  }
  const ValueRange r{bounds.list[0], bounds.list[1]};
  if (r.low > r.high) {
    throw ValueError(what + " range " + t.range->source + " = " + shape_str(bounds.list) + " holds no value");
  }
  return r;
}

WorkloadCase CompiledPlan::instantiate_case(std::size_t r, std::size_t c, const IndexCap& cap) const {
  const manifest::WorkloadRow& row = spec_.workloads[r];
  WorkloadCase out;
  out.label = row.label;
  out.id = row.label;
  CheckState f;
  init_state(f);
  ParamMap all;  // every ordinary parameter, given or default; the check state views its strings
  for (const ParamInfo& p : params_) {
    if (p.is_tensor) continue;
    const Value* given = row_value(row, p.name);
    if (given == nullptr && !p.default_value) throw ValueError("does not give parameter '" + p.name + "', which has no default");
    const Value& raw = given != nullptr ? *given : *p.default_value;
    std::optional<Value> v = p.type.convert(raw);
    if (!v) throw ValueError("parameter '" + p.name + "' = " + value_str(raw) + " is not of type " + p.type.text);
    if (given != nullptr) out.params.set(p.name, *v);
    all.set(p.name, std::move(*v));
  }
  for (const ParamInfo& p : params_) {
    if (!p.is_tensor) f.slots[static_cast<std::size_t>(p.slot)] = expr::val_from_value(all.at(p.name));
  }
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    const SlotDecl& d = slots_[s];
    if (d.source != SlotDecl::Source::Index) continue;
    if (d.kind.base == expr::Base::DType) continue;
    const Value* v = row_value(row, d.name);
    if (v == nullptr) continue;
    if (d.kind.base == expr::Base::Int) {
      if (!std::holds_alternative<std::int64_t>(*v) || std::get<std::int64_t>(*v) < 0) {
        throw ValueError("index '" + d.name + "' (Dim) must be a non-negative integer, got " + value_str(*v));
      }
      const std::int64_t value = std::get<std::int64_t>(*v);
      f.slots[s] = Val::integer(cap ? cap(d.name, value) : value);
    } else {
      if (!std::holds_alternative<std::vector<std::int64_t>>(*v)) {
        throw ValueError("index '" + d.name + "' (Shape) must be a list of integers, got " + value_str(*v));
      }
      const auto& list = std::get<std::vector<std::int64_t>>(*v);
      if (std::any_of(list.begin(), list.end(), [](std::int64_t x) { return x < 0; })) {
        throw ValueError("index '" + d.name + "' (Shape) must not have negative axes, got " + value_str(*v));
      }
      if (cap) {
        std::vector<std::int64_t> capped(list);
        for (std::int64_t& axis : capped) axis = cap(d.name, axis);
        f.slots[s] = Val::shape(capped);
      } else {
        f.slots[s] = Val::shape(list);
      }
    }
  }
  if (!row.dtype_cases.empty()) {
    for (const auto& [name, dtype_text] : row.dtype_cases[c]) {
      const auto it = std::find_if(slots_.begin(), slots_.end(), [&](const SlotDecl& d) { return d.name == name; });
      if (it == slots_.end() || it->source != SlotDecl::Source::Index || it->kind.base != expr::Base::DType) {
        throw ValueError("dtype_cases[" + std::to_string(c) + "] assigns '" + name + "', which is not a DType index");
      }
      DType d;
      if (!try_parse_dtype(dtype_text, d) || std::find(it->dtypes.begin(), it->dtypes.end(), d) == it->dtypes.end()) {
        throw ValueError("dtype_cases[" + std::to_string(c) + "] gives " + name + " = " + dtype_text + ", which is not in " +
                         it->kind_text);
      }
      f.slots[static_cast<std::size_t>(it - slots_.begin())] = Val::dtype(d);
    }
    for (const SlotDecl& d : slots_) {
      if (d.source != SlotDecl::Source::Index || d.kind.base != expr::Base::DType) continue;
      const Val& v = f.slots[static_cast<std::size_t>(&d - slots_.data())];
      if (v.known()) out.id += "-" + std::string(dtype_name(v.d));
    }
  }
  for (const ParamInfo& p : params_) {
    if (p.is_tensor || p.type.kind().base != expr::Base::DType) continue;
    const Val& v = f.slots[static_cast<std::size_t>(p.slot)];
    if (v.tag == Val::Tag::dtype) out.id += "-" + std::string(dtype_name(v.d));
  }

  const auto in_some = [&row](const std::string& name) {
    return std::find(row.some.begin(), row.some.end(), name) != row.some.end();
  };
  for (std::size_t id = 0; id < tensors_.size(); ++id) {
    const TensorDecl& t = tensors_[id];
    if (t.role == TensorRole::Output || t.optional_expr) continue;
    f.present[id] = t.optional ? in_some(t.name) : 1;
  }
  for (int i = 0; i < n_inputs_; ++i) {
    const TensorDecl& t = input(i);
    if (t.optional_expr) f.present[static_cast<std::size_t>(i)] = expr::evaluate_bool(t.optional_expr->root, f.env());
  }
  compute_lets(f);
  select_branches(f);
  compute_lets(f);

  const auto fill_spec = [&](const TensorDecl& t, TensorSpec& ts) {
    const ShapeTerm* term = this->term(t, f);
    if (term == nullptr) throw ValueError("no case of " + t.shape.text + " applies to " + t.name);
    try {
      const Val shape = expr::evaluate(term->whole.root, f.env());
      ts.shape.assign(shape.list.begin(), shape.list.end());
      ts.dtype = expr::evaluate(t.dtype.expr.root, f.env()).d;
    } catch (const expr::UnsetSlotError& e) {
      throw ValueError("does not give index '" + slots_[static_cast<std::size_t>(e.slot())].name + "', which " +
                       tensor_label(static_cast<int>(&t - tensors_.data())) + " reads");
    }
    if (std::any_of(ts.shape.begin(), ts.shape.end(), [](std::int64_t d) { return d < 0; })) {
      throw ValueError(tensor_label(static_cast<int>(&t - tensors_.data())) + " shape " + t.shape.text + " = " +
                       shape_str(ts.shape) + " has a negative axis");
    }
  };
  out.inputs.resize(static_cast<std::size_t>(n_inputs_));
  out.ranges.resize(static_cast<std::size_t>(n_inputs_));
  for (int i = 0; i < n_inputs_; ++i) {
    if (!f.present[static_cast<std::size_t>(i)]) continue;
    fill_spec(input(i), out.inputs[static_cast<std::size_t>(i)].emplace());
    if (input(i).range) out.ranges[static_cast<std::size_t>(i)] = value_range(input(i), f);
  }
  for (const ParamInfo& p : params_) {
    if (!p.is_tensor || !f.present[static_cast<std::size_t>(p.tensor)]) continue;
    TensorSpec ts;
    fill_spec(tensors_[static_cast<std::size_t>(p.tensor)], ts);
    out.params.set(p.name, Tensor::empty(ts.shape, ts.dtype, Device::meta()));
  }
  return out;
}

std::vector<WorkloadCase> CompiledPlan::workload_cases(const IndexCap& cap) const {
  std::vector<WorkloadCase> cases;
  for (std::size_t r = 0; r < spec_.workloads.size(); ++r) {
    const std::size_t n = std::max<std::size_t>(1, spec_.workloads[r].dtype_cases.size());
    for (std::size_t c = 0; c < n; ++c) {
      try {
        cases.push_back(instantiate_case(r, c, cap));
      } catch (const ValueError& e) {
        throw ValueError(message("workloads[" + std::to_string(r) + "]: " + e.what()));
      }
    }
  }
  return cases;
}

}  // namespace tileops::detail
