// The concrete SignaturePlan: one op class's manifest entry compiled into slots, tensor
// declarations and compiled expressions. The plan builder fills the private data once; the
// plan's own check methods (construction, call, outputs, roofline, workloads) only read it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "manifest/op_spec.hpp"
#include "manifest/param_type.hpp"
#include "signature/expr/compiler.hpp"
#include "signature/expr/eval.hpp"
#include "signature/expr/node.hpp"
#include "signature/expr/scope.hpp"
#include "signature/signature_plan.hpp"

namespace tileops::detail {

using expr::Expr;
using expr::Val;

// Sets `bytes` to the byte size of a tensor of `shape` and `dtype`; false when its extents,
// zeros counted as ones, reach 2^63 bytes (no stride could describe such a tensor).
bool tensor_bytes(ShapeView shape, DType dtype, std::int64_t& bytes);

// A slot of the check state: a parameter, a forall index or a let entry.
struct SlotDecl {
  enum class Source : std::uint8_t { Param, Index, Let };
  std::string name;
  Source source = Source::Param;
  expr::Kind kind;
  std::string kind_text;      // the declared kind ("Dim", "DType[float16 | bfloat16]", a param type)
  std::vector<DType> dtypes;  // a DType index's set
  int param = -1;             // Source::Param: index into ParamInfo list
};

// One construction parameter.
struct ParamInfo {
  std::string name;
  bool is_tensor = false;
  manifest::ParamType type;  // ordinary parameters
  std::optional<Value> default_value;
  int slot = -1;             // ordinary parameters
  int tensor = -1;           // construction-time tensors
  bool is_device = false;    // the `device` parameter of the call device rule
  bool used_as_axis = false; // appears as an axis or a `*p` item of a shape: must be non-negative
};

// One axis item of a shape term.
struct AxisItem {
  enum class Form : std::uint8_t {
    Axis,      // one axis: an Int expression
    Star,      // *S, S a Shape index that unification may solve
    StarExpr,  // *e, any other Seq[Int] expression
  };
  struct Linear {
    int slot = -1;              // a Dim index M
    std::int64_t a = 1;         // coefficient, > 0
    std::optional<Expr> rest;   // e in a * M + e; nullopt: 0
  };
  Form form = Form::Axis;
  std::string text;   // the item as written (after type family substitution)
  Expr expr;          // Axis and StarExpr: the item's value; Star: the index
  int star_slot = -1; // Star
  std::vector<Linear> linear;  // Axis: forms a * M + e that solve M when it is the only unknown
};

// One concrete shape: a list of axis items.
struct ShapeTerm {
  std::string text;  // e.g. "[K, N]"
  std::vector<AxisItem> items;
  Expr whole;        // the list, for evaluation
  int fixed_axes = 0;  // number of Axis items
};

// A tensor's shape declaration: one term, or a type family application whose term depends on
// the values of its match subjects.
struct ShapeDecl {
  std::string text;               // as written
  std::vector<int> subjects;      // subject ids the term depends on (mixed-radix digits)
  std::vector<int> term_of;       // per combination of subject values: index into terms, -1: no case
  std::vector<ShapeTerm> terms;
};

struct DTypeDecl {
  std::string text;
  int solve_slot = -1;  // a bare DType index: unification solves it
  Expr expr;            // otherwise evaluated and compared
};

// A match subject of a type family application, e.g. `trans_a` or `present(offsets)`.
struct Subject {
  std::string text;
  Expr expr;
  std::vector<Val> domain;          // its possible values, in order
  std::vector<std::string> names;   // the same, as text (for branch keys)
};

enum class TensorRole : std::uint8_t { Input, Construction, Output };

struct TensorDecl {
  std::string name;
  TensorRole role = TensorRole::Input;
  int position = 0;  // index among the tensors of its role
  DTypeDecl dtype;
  ShapeDecl shape;
  bool contiguous = false;
  bool device_cpu = false;
  // inputs and construction tensors
  bool optional = false;               // `optional: true`
  std::optional<Expr> optional_expr;   // passed exactly when this holds
  bool mutated = false;
  std::optional<Expr> mutated_expr;
  bool write_only = false;
  std::optional<Expr> range;           // [low, high]: the values of an integer input's elements
  // outputs
  std::optional<Expr> nullable;        // returned exactly when this holds
  bool buffer_out = false;
  int alias_input = -1;
};

struct Rule {
  std::string text;
  std::string message;  // the manifest's human sentence for a failed check; empty: show `text`
  Expr expr;
  bool domain = false;       // reads only discriminants: checked before branch selection
  bool params_only = false;  // reads parameters only: checked at construction
};

struct LetInfo {
  int slot = -1;
  Expr expr;
};

struct EffectBranch {
  std::uint64_t key = 0;  // bit per written input, then out, then one per null output
  std::string name;
};

// The working state of one signature check (construction, call, workload row or analysis):
// slot values, tensor facts and the values of match subjects.
struct CheckState {
  boost::container::small_vector<Val, 16> slots;
  boost::container::small_vector<std::int16_t, 16> source;   // per slot: the tensor id that solved it, -1 otherwise
  boost::container::small_vector<std::uint8_t, 12> present;  // per tensor id
  boost::container::small_vector<std::int64_t, 12> bytes;    // per tensor id
  boost::container::small_vector<std::uint8_t, 4> subject;   // per subject: index of its value in its domain

  expr::Env env() const {
    return {std::span<const Val>(slots.data(), slots.size()), std::span<const std::uint8_t>(present.data(), present.size()),
            std::span<const std::int64_t>(bytes.data(), bytes.size())};
  }
};

class CompiledPlan final : public SignaturePlan {
 public:
  // SignaturePlan
  const OpSpec& spec() const override { return spec_; }
  std::string_view op_name() const override { return spec_.name; }
  std::string_view family() const override { return spec_.family; }
  const std::vector<std::string>& param_names() const override { return param_names_; }
  const std::vector<std::size_t>& call_device_params() const override { return call_device_params_; }
  const std::vector<std::string>& input_names() const override { return input_names_; }
  const std::vector<std::string>& output_names() const override { return output_names_; }
  int input_index(std::string_view name) const override;
  bool has_call_time_tensor_input() const override { return n_inputs_ > 0; }
  bool has_composition() const override { return spec_.composition.has_value(); }
  const std::vector<std::string>& composition_stages() const override { return stage_names_; }
  const std::vector<std::string>& compile_op_names() const override { return compile_op_names_; }
  const std::vector<BoundaryOperator>& boundary_operators() const override { return boundary_operators_; }
  std::size_t boundary_for(const ConstructionState& state, std::span<const bool> present, bool out_passed) const override;
  ConstructionState check_construction(const ParamMap& given) const override;
  void check_writable(const CallArgs& args, const CallCheck& check) const override;
  // check_writable's part for a defined `out` with memory.
  void check_out_overlap(const CallArgs& args) const;
  // Records in check.reach the bytes the inputs and `out` reach (after a full check).
  void note_reach(const CallArgs& args, CallCheck& check) const;
  // Whether `out` shares no byte with any input, by check.reach (a repeat of its facts); false
  // sends the call to check_out_overlap, which says what overlaps, or lets a permitted alias be.
  bool disjoint_from_inputs(const CallArgs& args, const CallCheck& check) const;
  void check_call(const ConstructionState& state, const CallArgs& args, CallCheck& check,
                  SignatureCall& record) const override;
  OpOutputs make_outputs(const CallCheck& check, const CallArgs& args) const override;
  void check_result(const CallCheck& check, const CallArgs& args, const OpOutputs& outputs) const override;
  std::vector<WorkloadCase> workload_cases(const IndexCap& cap = {}) const override;
  RooflineFigures eval_roofline(const SignatureCall& record) const override;

 private:
  // The builder fills the data once, during compilation, and uses the helpers below on the
  // plan it is building (branch analysis, workload rows).
  friend class PlanBuilder;
  // One tensor's unification with its declaration (unify.cpp).
  struct Unifier;

  int output_tensor(int output) const { return n_inputs_ + n_construction_ + output; }
  int construction_tensor(int k) const { return n_inputs_ + k; }
  const TensorDecl& input(int i) const { return tensors_[static_cast<std::size_t>(i)]; }
  // The term a tensor's shape takes for the check state's subject values, or nullptr (no case).
  const ShapeTerm* term(const TensorDecl& t, const CheckState& f) const {
    return t.shape.subjects.empty() ? &t.shape.terms.front() : branch_term(t, f);
  }
  // term() of a shape that is a type family application.
  const ShapeTerm* branch_term(const TensorDecl& t, const CheckState& f) const;
  // Sizes a new, empty check state for this plan.
  void init_state(CheckState& f) const;
  // The calling thread's check state for check_call, set to what construction state `st` knows (its
  // slots and construction tensors; nothing of the call). Reusing it keeps the call path free
  // of per-call construction of slot storage.
  CheckState& call_state(const ConstructionState& st) const;
  // Evaluates the match subjects (all their inputs are known; at construction, those that read
  // no call-time tensor); throws ValueError for a value outside a subject's domain.
  void select_branches(CheckState& f, bool construction = false) const;
  // Evaluates the let entries whose inputs are known.
  void compute_lets(CheckState& f) const;
  // "name = value" for the names an expression reads (params, indices, lets, presence).
  std::string describe_reads(const Expr& e, const CheckState& f) const;
  // Evaluates rule `index` (rules.cpp); when it does not hold throws ValueError "Op: <message>
  // (names = values)" for a rule with a manifest message, else "Op: shape_rules[i] 'text' is
  // false (names = values)"; when evaluating it fails, names the rule and the reason.
  void check_rule(std::size_t index, const CheckState& f) const;
  // Unification of actual tensors with their declarations (unify.cpp, every unification form):
  // unifies each (tensor id, tensor) pair with its declaration, solving indices into `f` until
  // no more can be solved; let entries are computed as their inputs become known. The check state's
  // subjects must be selected. Throws TypeError for a dtype outside its index's set or
  // different from what its declaration evaluates to, ValueError for a rank or axis that does
  // not match, naming the tensor, the declaration, its evaluated form and where each index
  // read came from. Throws ValueError when a declaration cannot be resolved (an index no
  // tensor determines).
  void unify_tensors(std::span<const std::pair<int, const Tensor*>> tensors, CheckState& f) const;
  // The term evaluated as far as the check state allows: "[4096, N]".
  std::string describe_term(const ShapeTerm& term, const CheckState& f) const;
  // " (K = 4096 solved from input 'a')" for the indices and lets `e` reads.
  std::string provenance(const Expr& e, const CheckState& f) const;
  // Parts of check_call (call_check.cpp, call_device.cpp, call_record.cpp).
  void check_dtype_combos(const CheckState& f) const;
  void infer_output(const TensorDecl& t, CheckState& f, OutputPlan& out) const;
  // `accelerator`: set when the accelerator's current device decided it.
  std::optional<Device> call_device(const CallArgs& args, const ConstructionState& st, const CheckState& f,
                                    bool& accelerator) const;
  void check_devices(const CallArgs& args, const std::optional<Device>& device) const;
  void check_out(const Tensor& out, const CallCheck& check) const;
  void fill_record(const CallArgs& args, const ConstructionState& st, const CallCheck& check, const CheckState& f,
                   SignatureCall& record) const;
  // Case `c` of workload row `r` (c indexes its dtype_cases; 0 when it has none): the case id,
  // the parameters the row gives and one TensorSpec per present input. Construction-time
  // tensors the row passes are meta tensors in `params`. Throws ValueError naming what does not
  // instantiate.
  WorkloadCase instantiate_case(std::size_t r, std::size_t c, const IndexCap& cap = {}) const;
  // Throws TypeError unless input `i` being passed or not (`passed`) is what its declaration
  // asks for (step 1 of a call check).
  void check_presence(int i, bool passed, const CheckState& f) const;
  // Whether a call writes input `i`, passed or not as `passed`: its `mutated` declaration.
  bool writes_input(int i, bool passed, const CheckState& f) const {
    const TensorDecl& t = input(i);
    return passed && (t.mutated || (t.mutated_expr && expr::evaluate_bool(t.mutated_expr->root, f.env())));
  }
  // The bounds an input's range gives in the check state of a workload case.
  ValueRange value_range(const TensorDecl& t, CheckState& f) const;
  // "op: " prefixed message.
  std::string message(const std::string& what) const { return spec_.name + ": " + what; }
  // The name of the thing that solved slot `s` ("input 'a'"), or "".
  std::string solved_by(const CheckState& f, int s) const;
  // "input 'x'", "construction tensor 'r'", "output 'y'".
  std::string tensor_label(int id) const;

  OpSpec spec_;
  std::vector<SlotDecl> slots_;
  std::vector<ParamInfo> params_;
  std::vector<TensorDecl> tensors_;  // inputs, construction tensors, outputs
  int n_inputs_ = 0;
  int n_construction_ = 0;
  int n_outputs_ = 0;
  std::vector<Subject> subjects_;
  std::vector<std::string> branch_keys_;  // per combination of all subjects' values
  std::vector<Rule> rules_;
  std::vector<LetInfo> lets_;             // in dependency order
  std::vector<std::vector<std::pair<int, DType>>> dtype_combos_;  // slot, dtype
  Expr flops_;
  std::optional<Expr> bytes_;
  std::vector<EffectBranch> effects_;
  int device_param_ = -1;                 // index into params_
  int out_output_ = -1;                   // the output declaring `buffer: out`
  std::uint64_t out_may_alias_ = 0;       // the inputs (bits) `out` may be, by its may_alias
  expr::Scope scope_;

  std::vector<std::string> param_names_;
  std::vector<std::size_t> call_device_params_;
  std::vector<std::string> input_names_;
  std::vector<std::string> output_names_;
  std::vector<std::string> stage_names_;
  std::vector<std::string> compile_op_names_;
  std::vector<BoundaryOperator> boundary_operators_;
};

}  // namespace tileops::detail
