// The call check (step 2 of a call): presence, domain restrictions, type family
// branches, unification and refinements, the call device, contiguity and `out`; then the
// effects of the call and its record.
#include <algorithm>
#include <cstdlib>
#include <utility>

#include <boost/container/small_vector.hpp>

#include "signature/compiled_plan.hpp"
#include "signature/rules.hpp"

namespace tileops::detail {
void CompiledPlan::check_call(const ConstructionState& st, const CallArgs& args, CallCheck& check,
                              SignatureCall& record) const {
  if (static_cast<int>(args.inputs.size()) != n_inputs_) {
    throw TypeError(message("takes " + std::to_string(n_inputs_) + " input tensor slot(s), got " +
                            std::to_string(args.inputs.size())));
  }
  CheckState& f = call_state(st);

  // 1. Presence.
  const Tensor* inputs = args.inputs.data();
  for (int i = 0; i < n_inputs_; ++i) f.present[static_cast<std::size_t>(i)] = inputs[i].defined();
  boost::container::small_vector<std::pair<int, const Tensor*>, 6> given;
  for (int i = 0; i < n_inputs_; ++i) {
    const bool passed = inputs[i].defined();
    if (passed) given.emplace_back(i, &inputs[i]);
    check_presence(i, passed, f);
  }
  const bool has_out = args.out.defined();
  if (has_out && out_output_ < 0) throw TypeError(message("takes no 'out' buffer, but one was passed"));

  // 2. Domain restrictions; 3. type family branches.
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    if (rules_[i].domain && !rules_[i].params_only) check_rule(i, f);
  }
  select_branches(f);

  // 4. Unification, then the remaining refinements.
  unify_tensors({given.data(), given.size()}, f);
  compute_lets(f);
  if (!dtype_combos_.empty()) check_dtype_combos(f);
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    if (!rules_[i].domain && !rules_[i].params_only) check_rule(i, f);
  }

  // Output types.
  check.outputs.clear();
  for (int o = 0; o < n_outputs_; ++o) {
    const int id = output_tensor(o);
    const TensorDecl& t = tensors_[static_cast<std::size_t>(id)];
    OutputPlan& out = check.outputs.emplace_back();
    out.present = !t.nullable || expr::evaluate_bool(t.nullable->root, f.env());
    f.present[static_cast<std::size_t>(id)] = out.present;
    out.is_out_buffer = t.buffer_out && has_out;
    if (out.present) infer_output(t, f, out);
  }

  // The call device, and every tensor on it.
  bool accelerator_device = false;
  check.device = call_device(args, st, f, accelerator_device);
  check_devices(args, check.device);

  check.contiguous.clear();
  for (int i = 0; i < n_inputs_; ++i) {
    const TensorDecl& t = input(i);
    check.contiguous.push_back(t.contiguous);
    const Tensor& x = inputs[i];
    if (t.contiguous && x.defined() && !x.is_contiguous()) {
      throw ValueError(message("input '" + t.name + "' must be contiguous (declared contiguous: true), but has strides " +
                               shape_str(x.strides()) + " for shape " + shape_str(x.shape())));
    }
  }

  // 5. The output buffer.
  if (has_out) check_out(args.out, check);

  // Effects.
  check.written.clear();
  std::uint64_t effect = 0;
  bool any_written = false;
  bool all_empty = true;
  for (int i = 0; i < n_inputs_; ++i) {
    const bool written = writes_input(i, inputs[i].defined(), f);
    check.written.push_back(written);
    if (!written) continue;
    effect |= std::uint64_t{1} << i;
    any_written = true;
    all_empty = all_empty && inputs[i].numel() == 0;
  }
  if (has_out) effect |= std::uint64_t{1} << n_inputs_;
  for (int o = 0; o < n_outputs_; ++o) {
    OutputPlan& out = check.outputs[static_cast<std::size_t>(o)];
    const TensorDecl& t = tensors_[static_cast<std::size_t>(output_tensor(o))];
    if (!out.present) {
      effect |= std::uint64_t{1} << (n_inputs_ + 1 + o);
      continue;
    }
    if (t.alias_input >= 0 && check.written[static_cast<std::size_t>(t.alias_input)]) {
      out.alias_input = t.alias_input;
      continue;
    }
    any_written = true;
    all_empty = all_empty && shape_numel(out.shape) == 0;
  }
  check.empty_write = any_written && all_empty;
  check.effect_branch = 0;
  for (std::size_t b = 0; b < effects_.size(); ++b) {
    if (effects_[b].key == effect) check.effect_branch = static_cast<int>(b);
  }

  check_writable(args, check);
  note_reach(args, check);
  fill_record(args, st, check, f, record);
  check.device_from_accelerator = accelerator_device;
}

void CompiledPlan::check_presence(int i, bool passed, const CheckState& f) const {
  const TensorDecl& t = input(i);
  if (t.optional_expr) {
    const bool want = expr::evaluate_bool(t.optional_expr->root, f.env());
    if (want != passed) {
      throw TypeError(message("input '" + t.name + "' must " + (want ? "" : "not ") + "be passed when '" +
                              t.optional_expr->source + "' is " + (want ? "true" : "false") + " (" +
                              describe_reads(*t.optional_expr, f) + ")"));
    }
  } else if (!t.optional && !passed) {
    throw TypeError(message("input '" + t.name + "' is required but was not passed"));
  }
}

std::size_t CompiledPlan::boundary_for(const ConstructionState& st, std::span<const bool> present, bool out_passed) const {
  if (effects_.empty() || compile_op_names_.empty()) throw TypeError(message("has no compile boundary"));
  if (present.size() != static_cast<std::size_t>(n_inputs_)) {
    throw TypeError(message("takes " + std::to_string(n_inputs_) + " input presence flag(s), got " +
                            std::to_string(present.size())));
  }
  if (out_passed && out_output_ < 0) throw TypeError(message("takes no 'out' buffer, but one was passed"));
  CheckState& f = call_state(st);
  for (int i = 0; i < n_inputs_; ++i) f.present[static_cast<std::size_t>(i)] = present[static_cast<std::size_t>(i)];
  for (int i = 0; i < n_inputs_; ++i) check_presence(i, present[static_cast<std::size_t>(i)], f);
  std::uint64_t effect = 0;
  for (int i = 0; i < n_inputs_; ++i) {
    if (writes_input(i, present[static_cast<std::size_t>(i)], f)) effect |= std::uint64_t{1} << i;
  }
  if (out_passed) effect |= std::uint64_t{1} << n_inputs_;
  for (int o = 0; o < n_outputs_; ++o) {
    const TensorDecl& t = tensors_[static_cast<std::size_t>(output_tensor(o))];
    if (t.nullable && !expr::evaluate_bool(t.nullable->root, f.env())) effect |= std::uint64_t{1} << (n_inputs_ + 1 + o);
  }
  for (std::size_t b = 0; b < effects_.size(); ++b) {
    if (effects_[b].key == effect) return b;
  }
  throw TypeError(message("no boundary operator stands for a call with these inputs" +
                          std::string(out_passed ? " and 'out'" : "") + "; the domain restrictions exclude it"));
}

void CompiledPlan::check_writable(const CallArgs& args, const CallCheck& check) const {
  const auto read_only = [](const Tensor& t) { return t.defined() && t.storage() && t.storage()->read_only(); };
  for (int i = 0; i < n_inputs_; ++i) {
    if (check.written[static_cast<std::size_t>(i)] && read_only(args.inputs[static_cast<std::size_t>(i)])) {
      throw ValueError(message("input '" + input(i).name + "' is read-only (a DLPack import flagged read-only), but this " +
                               "call writes it"));
    }
  }
  if (read_only(args.out)) {
    throw ValueError(message("the 'out' buffer is read-only (a DLPack import flagged read-only); pass a writable one"));
  }
  if (!args.out.defined() || args.out.numel() == 0 || args.out.data_ptr() == nullptr) return;
  if (!check.reach.empty() && disjoint_from_inputs(args, check)) return;
  check_out_overlap(args);
}

namespace {

// The bytes [low, high) a view's elements reach from its first element.
std::pair<std::int64_t, std::int64_t> byte_reach(const Tensor& t) {
  std::int64_t low = 0, high = 0;
  for (std::size_t d = 0; d < t.shape().size(); ++d) {
    const std::int64_t reach = (t.shape()[d] - 1) * t.strides()[d];
    (reach < 0 ? low : high) += reach;
  }
  const auto size = static_cast<std::int64_t>(dtype_size(t.dtype()));
  return {low * size, (high + 1) * size};
}

// The bytes [first, last) a view's elements reach.
std::pair<std::uintptr_t, std::uintptr_t> byte_span(const Tensor& t, std::pair<std::int64_t, std::int64_t> reach) {
  const auto base = reinterpret_cast<std::uintptr_t>(t.data_ptr());
  return {base + static_cast<std::uintptr_t>(reach.first), base + static_cast<std::uintptr_t>(reach.second)};
}

std::pair<std::uintptr_t, std::uintptr_t> byte_span(const Tensor& t) { return byte_span(t, byte_reach(t)); }

// An input check_out_overlap passes over: nothing to overlap.
bool holds_no_memory(const Tensor& t) { return !t.defined() || t.data_ptr() == nullptr || t.numel() == 0; }

// True when no two elements of `t` can share memory: ordered by stride, each dimension of more
// than one element steps past everything the smaller ones reach. (A layout that interleaves
// without sharing is refused too: no kernel here is written for one.)
bool provably_distinct_elements(const Tensor& t) {
  if (t.is_contiguous() || t.numel() <= 1) return true;
  boost::container::small_vector<std::pair<std::int64_t, std::int64_t>, 8> dims;  // (|stride|, extent)
  for (std::size_t d = 0; d < t.shape().size(); ++d) {
    if (t.shape()[d] > 1) dims.push_back({std::abs(t.strides()[d]), t.shape()[d]});
  }
  std::sort(dims.begin(), dims.end());
  std::int64_t reach = 1;  // elements the smaller dimensions span
  for (const auto& [stride, extent] : dims) {
    if (stride < reach) return false;
    reach = stride * extent;
  }
  return true;
}

bool same_view(const Tensor& a, const Tensor& b) {
  return a.data_ptr() == b.data_ptr() && a.dtype() == b.dtype() && a.shape() == b.shape() && a.strides() == b.strides();
}

}  // namespace

void CompiledPlan::note_reach(const CallArgs& args, CallCheck& check) const {
  if (!args.out.defined() || args.out.numel() == 0 || args.out.data_ptr() == nullptr) return;
  // A call cache matches contiguity, not strides: only contiguous views reach bytes that their
  // facts decide.
  const auto strided = [](const Tensor& t) { return !holds_no_memory(t) && !t.is_contiguous(); };
  if (strided(args.out) || std::any_of(args.inputs.begin(), args.inputs.end(), strided)) return;
  for (int i = 0; i < n_inputs_; ++i) {
    const Tensor& in = args.inputs[static_cast<std::size_t>(i)];
    check.reach.push_back(holds_no_memory(in) ? std::pair<std::int64_t, std::int64_t>{0, 0} : byte_reach(in));
  }
  check.reach.push_back(byte_reach(args.out));
}

bool CompiledPlan::disjoint_from_inputs(const CallArgs& args, const CallCheck& check) const {
  const auto [out_first, out_last] = byte_span(args.out, check.reach.back());
  for (int i = 0; i < n_inputs_; ++i) {
    const Tensor& in = args.inputs[static_cast<std::size_t>(i)];
    if (!in.defined() || in.data_ptr() == nullptr) continue;
    const auto [first, last] = byte_span(in, check.reach[static_cast<std::size_t>(i)]);
    if (first < out_last && out_first < last) return false;
  }
  return true;
}

void CompiledPlan::check_out_overlap(const CallArgs& args) const {
  const Tensor& out = args.out;
  // Messages are built only to be thrown: a call with `out` passes here every time.
  const auto what = [&] {
    return "'out' (the buffer of output '" + tensors_[static_cast<std::size_t>(output_tensor(out_output_))].name + "')";
  };
  if (!provably_distinct_elements(out)) {
    throw ValueError(message(what() + " has shape " + shape_str(out.shape()) + " and strides " + shape_str(out.strides()) +
                             ", under which several of its elements may share memory; pass a buffer whose elements are "
                             "distinct"));
  }
  const auto [out_first, out_last] = byte_span(out);
  for (int i = 0; i < n_inputs_; ++i) {
    const Tensor& in = args.inputs[static_cast<std::size_t>(i)];
    if (holds_no_memory(in)) continue;
    const auto [first, last] = byte_span(in);
    if (first >= out_last || out_first >= last) continue;
    const bool allowed = (out_may_alias_ >> i) & 1;
    if (allowed && same_view(in, out)) continue;
    const std::string& name = input(i).name;
    if (same_view(in, out)) {
      throw ValueError(message(what() + " is input '" + name + "' itself, which this op does not allow (its manifest "
                               "declares no may_alias of '" + name + "'); pass a separate buffer"));
    }
    throw ValueError(message(what() + " overlaps input '" + name + "' in part: they share memory without being the same "
                             "view, so the result would depend on the order the kernel writes in; pass a separate "
                             "buffer" + (allowed ? " or '" + name + "' itself" : std::string())));
  }
}

void CompiledPlan::check_dtype_combos(const CheckState& f) const {
  for (const auto& row : dtype_combos_) {
    const bool all = std::all_of(row.begin(), row.end(), [&f](const std::pair<int, DType>& c) {
      const Val& v = f.slots[static_cast<std::size_t>(c.first)];
      return !v.known() || v.d == c.second;
    });
    if (all) return;
  }
  std::string seen;
  for (const auto& [slot, dtype] : dtype_combos_.front()) {
    seen += (seen.empty() ? "" : ", ") + slots_[static_cast<std::size_t>(slot)].name + " = " +
            expr::val_str(f.slots[static_cast<std::size_t>(slot)]);
  }
  throw TypeError(message("dtypes (" + seen + ") are not one of the signature's dtype_combos"));
}

void CompiledPlan::infer_output(const TensorDecl& t, CheckState& f, OutputPlan& out) const {
  const ShapeTerm* term = this->term(t, f);
  if (term == nullptr) throw ValueError(message("no case of " + t.shape.text + " applies to output '" + t.name + "'"));
  const auto where = [&](const Expr& e) { return "output '" + t.name + "' " + e.source; };
  try {
    expr::evaluate_list(term->whole.root, f.env(), out.shape);
    const Val* dtype = expr::slot_ref(t.dtype.expr.root, f.env());
    out.dtype = dtype != nullptr ? dtype->d : expr::evaluate(t.dtype.expr.root, f.env()).d;
  } catch (const expr::UnsetSlotError& e) {
    throw ValueError(message(where(term->whole) + " reads '" + slots_[static_cast<std::size_t>(e.slot())].name +
                             "', which this call does not determine"));
  } catch (const ValueError& e) {
    throw ValueError(message("output '" + t.name + "' shape " + t.shape.text + ": " + e.what() + " (" +
                             describe_reads(term->whole, f) + ")"));
  }
  for (std::int64_t d : out.shape) {
    if (d < 0) {
      throw ValueError(message("output '" + t.name + "' shape " + t.shape.text + " = " + shape_str(out.shape) +
                               " has a negative axis (" + describe_reads(term->whole, f) + ")"));
    }
  }
  if (!shape_fits(out.shape, dtype_size(out.dtype))) {
    try {
      throw_bad_shape(out.shape, "output '" + t.name + "' " + t.shape.text, dtype_size(out.dtype));
    } catch (const ValueError& e) {
      throw ValueError(message(e.what() + std::string(" (") + describe_reads(term->whole, f) + ")"));
    }
  }
}

}  // namespace tileops::detail
