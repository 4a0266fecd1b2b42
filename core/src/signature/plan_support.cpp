#include <algorithm>

#include "signature/compiled_plan.hpp"

namespace tileops::detail {

int CompiledPlan::input_index(std::string_view name) const {
  for (int i = 0; i < n_inputs_; ++i) {
    if (tensors_[static_cast<std::size_t>(i)].name == name) return i;
  }
  return -1;
}

const ShapeTerm* CompiledPlan::branch_term(const TensorDecl& t, const CheckState& f) const {
  std::size_t index = 0;
  for (int s : t.shape.subjects) {
    index = index * subjects_[static_cast<std::size_t>(s)].domain.size() + f.subject[static_cast<std::size_t>(s)];
  }
  const int k = t.shape.term_of[index];
  return k < 0 ? nullptr : &t.shape.terms[static_cast<std::size_t>(k)];
}

void CompiledPlan::init_state(CheckState& f) const {
  f.slots.resize(slots_.size());
  f.source.resize(slots_.size(), -1);
  f.present.resize(tensors_.size(), 0);
  f.bytes.resize(tensors_.size(), 0);
  f.subject.resize(subjects_.size(), 0);
}

namespace {

// Out of line so that the check state's address is computed once per call: inlined, the compiler
// recomputes the thread-local address (a __tls_get_addr call) at every use.
[[gnu::noinline]] CheckState& thread_check_state() {
  thread_local CheckState state;
  return state;
}

}  // namespace

CheckState& CompiledPlan::call_state(const ConstructionState& st) const {
  CheckState& f = thread_check_state();
  const std::size_t n_slots = slots_.size();
  if (f.slots.size() < n_slots) {
    f.slots.resize(n_slots);
    f.source.resize(n_slots);
  }
  if (f.present.size() < tensors_.size()) {
    f.present.resize(tensors_.size());
    f.bytes.resize(tensors_.size());
  }
  if (f.subject.size() < subjects_.size()) f.subject.resize(subjects_.size());
  Val* slots = f.slots.data();
  std::int16_t* source = f.source.data();
  for (std::size_t s = 0; s < n_slots; ++s) {
    const std::int16_t known = st.slot_source[s];
    if (known == -2) {
      slots[s].tag = Val::Tag::unset;
      source[s] = -1;
    } else {
      expr::assign_from_index_value(slots[s], st.slots[s]);
      source[s] = known;
    }
  }
  std::fill_n(f.present.data(), tensors_.size(), std::uint8_t{0});
  if (n_construction_ == 0) return f;
  for (std::size_t k = 0; k < params_.size(); ++k) {
    if (params_[k].is_tensor) {
      f.present[static_cast<std::size_t>(params_[k].tensor)] = std::holds_alternative<Tensor>(st.params.items()[k].second);
    }
  }
  return f;
}

void CompiledPlan::select_branches(CheckState& f, bool construction) const {
  for (std::size_t i = 0; i < subjects_.size(); ++i) {
    const Subject& s = subjects_[i];
    if (construction && std::any_of(s.expr.tensors.begin(), s.expr.tensors.end(), [this](int t) {
          return tensors_[static_cast<std::size_t>(t)].role != TensorRole::Construction;
        })) {
      continue;
    }
    if (s.expr.root.kind.base == expr::Base::Bool) {  // the domain is {false, true}
      f.subject[i] = expr::evaluate_bool(s.expr.root, f.env()) ? 1 : 0;
      continue;
    }
    const Val v = expr::evaluate(s.expr.root, f.env());
    const auto it = std::find_if(s.domain.begin(), s.domain.end(), [&v](const Val& d) { return expr::val_equal(d, v); });
    if (it == s.domain.end()) {
      throw ValueError(message("type family subject '" + s.text + "' = " + expr::val_str(v) + " matches no case"));
    }
    f.subject[i] = static_cast<std::uint8_t>(it - s.domain.begin());
  }
}

void CompiledPlan::compute_lets(CheckState& f) const {
  for (const LetInfo& let : lets_) {
    Val& slot = f.slots[static_cast<std::size_t>(let.slot)];
    if (slot.known()) continue;
    const bool ready = std::all_of(let.expr.slots.begin(), let.expr.slots.end(),
                                   [&f](int s) { return f.slots[static_cast<std::size_t>(s)].known(); });
    if (!ready) continue;
    try {
      slot = expr::evaluate(let.expr.root, f.env());
    } catch (const ValueError& e) {
      throw ValueError(message("let '" + slots_[static_cast<std::size_t>(let.slot)].name + "' = '" + let.expr.source +
                               "': " + e.what() + " (" + describe_reads(let.expr, f) + ")"));
    }
  }
}

std::string CompiledPlan::describe_reads(const Expr& e, const CheckState& f) const {
  std::string s;
  for (int slot : e.slots) {
    s += (s.empty() ? "" : ", ") + slots_[static_cast<std::size_t>(slot)].name + " = " +
         expr::val_str(f.slots[static_cast<std::size_t>(slot)]);
  }
  for (int t : e.tensors) {
    s += (s.empty() ? "" : ", ") + std::string("present(") + tensors_[static_cast<std::size_t>(t)].name +
         ") = " + (f.present[static_cast<std::size_t>(t)] ? "true" : "false");
  }
  return s;
}

std::string CompiledPlan::solved_by(const CheckState& f, int s) const {
  const int id = f.source[static_cast<std::size_t>(s)];
  return id >= 0 ? tensor_label(id) : "";
}

std::string CompiledPlan::tensor_label(int id) const {
  const TensorDecl& t = tensors_[static_cast<std::size_t>(id)];
  switch (t.role) {
    case TensorRole::Input: return "input '" + t.name + "'";
    case TensorRole::Construction: return "parameter '" + t.name + "'";
    case TensorRole::Output: return "output '" + t.name + "'";
  }
  return t.name;
}

}  // namespace tileops::detail
