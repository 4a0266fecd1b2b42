#include "signature/compiled_plan.hpp"

#include <algorithm>

namespace tileops::detail {
namespace {

bool all_known(const Expr& e, const CheckState& f) {
  for (int s : e.slots) {
    if (!f.slots[static_cast<std::size_t>(s)].known()) return false;
  }
  return true;
}

// The single unknown slot `e` reads, -1 when none, -2 when several.
int single_unknown(const Expr& e, const CheckState& f) {
  int found = -1;
  for (int s : e.slots) {
    if (f.slots[static_cast<std::size_t>(s)].known()) continue;
    if (found >= 0) return -2;
    found = s;
  }
  return found;
}

}  // namespace

std::string CompiledPlan::provenance(const Expr& e, const CheckState& f) const {
  std::string s;
  for (int slot : e.slots) {
    const SlotDecl& d = slots_[static_cast<std::size_t>(slot)];
    const Val& v = f.slots[static_cast<std::size_t>(slot)];
    if (d.source == SlotDecl::Source::Param || !v.known()) continue;
    s += (s.empty() ? "" : ", ") + d.name + " = " + expr::val_str(v);
    const std::string by = solved_by(f, slot);
    if (!by.empty()) s += " solved from " + by;
  }
  return s.empty() ? "" : " (" + s + ")";
}

struct CompiledPlan::Unifier {
  const CompiledPlan& plan;
  CheckState& f;
  int id;
  const Tensor& t;
  const TensorDecl& decl;
  const ShapeTerm& term;

  std::string shape_prefix() const {
    return plan.tensor_label(id) + " shape " + shape_str(t.shape()) + " does not match " + decl.shape.text;
  }

  [[noreturn]] void mismatch(const Expr* read) const {
    std::string msg = shape_prefix() + " = " + plan.describe_term(term, f);
    if (read != nullptr) msg += plan.provenance(*read, f);
    throw ValueError(plan.message(msg));
  }

  // Slot `slot`, to be set by the caller, and records that this tensor solved it.
  Val& solve(int slot) const {
    f.source[static_cast<std::size_t>(slot)] = static_cast<std::int16_t>(id);
    return f.slots[static_cast<std::size_t>(slot)];
  }

  // Processes the dtype; true when done.
  bool dtype() const {
    const DTypeDecl& d = decl.dtype;
    const DType actual = t.dtype();
    const Val* solved = d.solve_slot >= 0 ? &f.slots[static_cast<std::size_t>(d.solve_slot)] : nullptr;
    if (solved != nullptr && solved->known() && solved->d == actual) return true;
    if (solved != nullptr && !solved->known()) {
      const SlotDecl& s = plan.slots_[static_cast<std::size_t>(d.solve_slot)];
      if (std::find(s.dtypes.begin(), s.dtypes.end(), actual) == s.dtypes.end()) {
        throw TypeError(plan.message(plan.tensor_label(id) + " dtype " + std::string(dtype_name(actual)) +
                                     " is not in " + s.name + " = " + s.kind_text));
      }
      solve(d.solve_slot).set_dtype(actual);
      return true;
    }
    if (!all_known(d.expr, f)) return false;
    const Val* ref = expr::slot_ref(d.expr.root, f.env());
    if (ref != nullptr ? ref->d == actual : d.expr.root.op == expr::NodeOp::Const && d.expr.root.value.d == actual) return true;
    const Val want = expr::evaluate(d.expr.root, f.env());
    if (want.d == actual) return true;
    std::string msg = plan.tensor_label(id) + " dtype " + std::string(dtype_name(actual)) + " does not match ";
    msg += d.text == dtype_name(want.d) ? d.text : d.text + " = " + std::string(dtype_name(want.d));
    if (d.solve_slot >= 0) {
      const std::string by = plan.solved_by(f, d.solve_slot);
      if (!by.empty()) msg += " (solved from " + by + ")";
    } else {
      msg += plan.provenance(d.expr, f);
    }
    throw TypeError(plan.message(msg));
  }

  // Processes the shape items still pending in `pending` (bit per item); true on progress.
  bool shape(std::uint64_t& pending) const {
    const auto rank = static_cast<std::int64_t>(t.shape().size());
    const std::size_t n = term.items.size();
    std::int64_t length[64];  // per item (a term has at most 64); -1: a star whose length is not known yet
    std::int64_t known_total = 0;
    int unknown_stars = 0;
    if (static_cast<std::size_t>(term.fixed_axes) == n) {
      known_total = static_cast<std::int64_t>(n);
      std::fill_n(length, n, std::int64_t{1});
    } else {
      for (std::size_t k = 0; k < n; ++k) {
        const AxisItem& item = term.items[k];
        std::int64_t len = 1;
        if (item.form == AxisItem::Form::Star && f.slots[static_cast<std::size_t>(item.star_slot)].known()) {
          len = static_cast<std::int64_t>(f.slots[static_cast<std::size_t>(item.star_slot)].list.size());
        } else if (item.form == AxisItem::Form::StarExpr && item.expr.root.op == expr::NodeOp::Slot) {
          const Val& v = f.slots[static_cast<std::size_t>(item.expr.root.index)];  // `*p`: no evaluation
          len = v.known() ? static_cast<std::int64_t>(v.list.size()) : -1;
        } else if (item.form == AxisItem::Form::StarExpr && all_known(item.expr, f)) {
          const Val* ref = expr::slot_ref(item.expr.root, f.env());
          len = static_cast<std::int64_t>(ref != nullptr ? ref->list.size() : expr::evaluate(item.expr.root, f.env()).list.size());
        } else if (item.form != AxisItem::Form::Axis) {
          len = -1;
        }
        length[k] = len;
        if (len < 0) {
          ++unknown_stars;
        } else {
          known_total += len;
        }
      }
    }
    if (unknown_stars > 1) return false;
    if (unknown_stars == 0 && rank != known_total) {
      throw ValueError(plan.message(shape_prefix() + ": rank " + std::to_string(rank) + ", but " + term.text + " has " +
                                    std::to_string(known_total) + " axes" + rank_detail()));
    }
    if (unknown_stars == 1 && rank < known_total) {
      throw ValueError(plan.message(shape_prefix() + ": rank " + std::to_string(rank) + ", but " + term.text +
                                    " needs at least " + std::to_string(known_total) + " axes" + rank_detail()));
    }
    bool progress = false;
    std::int64_t pos = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const std::int64_t len = length[k] >= 0 ? length[k] : rank - known_total;
      const std::uint64_t bit = std::uint64_t{1} << k;
      if ((pending & bit) != 0 && item_step(term.items[k], pos, len)) {
        pending &= ~bit;
        progress = true;
      }
      pos += len;
    }
    return progress;
  }

  // " (B = [2048])" for the star lengths already known, to explain a rank mismatch.
  std::string rank_detail() const {
    std::string s;
    for (const AxisItem& item : term.items) {
      if (item.form == AxisItem::Form::Axis) continue;
      const Expr& e = item.expr;
      if (!all_known(e, f)) continue;
      s += (s.empty() ? "" : ", ") + item.text.substr(1) + " = " + expr::val_str(expr::evaluate(e.root, f.env()));
    }
    return s.empty() ? "" : " (" + s + ")";
  }

  bool item_step(const AxisItem& item, std::int64_t pos, std::int64_t len) const {
    const Shape& actual = t.shape();
    const auto first = actual.begin() + pos;
    switch (item.form) {
      case AxisItem::Form::Star: {
        Val& slot = f.slots[static_cast<std::size_t>(item.star_slot)];
        if (!slot.known()) {
          solve(item.star_slot).set_shape(ShapeView(actual.data() + pos, static_cast<std::size_t>(len)));
          return true;
        }
        if (!std::equal(slot.list.begin(), slot.list.end(), first)) mismatch(&item.expr);
        return true;
      }
      case AxisItem::Form::StarExpr: {
        if (!all_known(item.expr, f)) return false;
        if (const Val* ref = expr::slot_ref(item.expr.root, f.env())) {
          if (!std::equal(ref->list.begin(), ref->list.end(), first)) mismatch(&item.expr);
          return true;
        }
        const Val v = expr::evaluate(item.expr.root, f.env());
        if (!std::equal(v.list.begin(), v.list.end(), first)) mismatch(&item.expr);
        return true;
      }
      case AxisItem::Form::Axis: break;
    }
    const std::int64_t axis = *first;
    if (item.expr.root.op == expr::NodeOp::Slot) {  // the common `M`: no evaluation
      const Val& v = f.slots[static_cast<std::size_t>(item.expr.root.index)];
      if (v.known()) {
        if (v.i != axis) mismatch(&item.expr);
        return true;
      }
    }
    const int unknown = single_unknown(item.expr, f);
    if (unknown == -1) {
      const Val* ref = expr::slot_ref(item.expr.root, f.env());
      if ((ref != nullptr ? ref->i : expr::evaluate(item.expr.root, f.env()).i) != axis) mismatch(&item.expr);
      return true;
    }
    if (unknown == -2) return false;
    for (const AxisItem::Linear& lin : item.linear) {
      if (lin.slot != unknown) continue;
      const std::int64_t rest = lin.rest ? expr::evaluate(lin.rest->root, f.env()).i : 0;
      std::int64_t diff = 0;
      if (__builtin_sub_overflow(axis, rest, &diff) || diff < 0 || diff % lin.a != 0) {
        const std::string name = plan.slots_[static_cast<std::size_t>(lin.slot)].name;
        throw ValueError(plan.message(shape_prefix() + " = " + plan.describe_term(term, f) + ": axis " +
                                      std::to_string(pos) + " is " + std::to_string(axis) + ", which " + item.text +
                                      " cannot equal for a whole " + name + " >= 0" + plan.provenance(item.expr, f)));
      }
      solve(lin.slot).set_integer(diff / lin.a);
      return true;
    }
    return false;
  }
};

std::string CompiledPlan::describe_term(const ShapeTerm& term, const CheckState& f) const {
  std::string s = "[";
  bool first = true;
  for (const AxisItem& item : term.items) {
    std::string part;
    if (all_known(item.expr, f)) {
      const Val v = expr::evaluate(item.expr.root, f.env());
      if (item.form == AxisItem::Form::Axis) {
        part = std::to_string(v.i);
      } else {
        for (std::size_t i = 0; i < v.list.size(); ++i) part += (i ? ", " : "") + std::to_string(v.list[i]);
      }
    } else {
      part = item.text;
    }
    if (part.empty()) continue;
    s += (first ? "" : ", ") + part;
    first = false;
  }
  return s + "]";
}

void CompiledPlan::unify_tensors(std::span<const std::pair<int, const Tensor*>> tensors, CheckState& f) const {
  struct Pending {
    std::uint64_t items = 0;
    bool dtype = true;
    const ShapeTerm* term = nullptr;
  };
  boost::container::small_vector<Pending, 8> state(tensors.size());
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const TensorDecl& decl = tensors_[static_cast<std::size_t>(tensors[k].first)];
    state[k].term = term(decl, f);
    if (state[k].term == nullptr) {
      throw ValueError(message("no case of " + decl.shape.text + " applies to this call"));
    }
    const std::size_t n = state[k].term->items.size();
    state[k].items = n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
  }
  bool progress = true;
  bool pending = true;
  while (progress && pending) {
    progress = false;
    pending = false;
    for (std::size_t k = 0; k < tensors.size(); ++k) {
      Pending& p = state[k];
      if (!p.dtype && p.items == 0) continue;
      const int id = tensors[k].first;
      const Unifier u{*this, f, id, *tensors[k].second, tensors_[static_cast<std::size_t>(id)], *p.term};
      if (p.dtype && u.dtype()) {
        p.dtype = false;
        progress = true;
      }
      if (p.items != 0 && u.shape(p.items)) progress = true;
      pending = pending || p.dtype || p.items != 0;
    }
    if (progress) compute_lets(f);
  }
  if (!pending) return;
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    if (!state[k].dtype && state[k].items == 0) continue;
    const TensorDecl& decl = tensors_[static_cast<std::size_t>(tensors[k].first)];
    throw ValueError(message("cannot resolve " + tensor_label(tensors[k].first) + ": " +
                             (state[k].dtype ? "dtype " + decl.dtype.text : "shape " + decl.shape.text) +
                             " reads an index no tensor determines"));
  }
}

}  // namespace tileops::detail
