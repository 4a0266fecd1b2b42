// SignaturePlan: what one op class's manifest signature compiles into, once per class, shared
// by every instance. Nothing here parses text on the call path: check_call, make_outputs,
// check_result and eval_roofline only evaluate the pre-compiled plan.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "tileops/call_args.hpp"
#include "tileops/extend/manifest.hpp"
#include "tileops/op_class.hpp"
#include "tileops/ops/workload_cases.hpp"
#include "tileops/signature.hpp"
#include "tileops/value.hpp"

namespace tileops {

class OpSpec;  // the parsed manifest entry (see manifest/op_spec.hpp)

// What construction settles for one instance: every manifest parameter's final value (given
// or default, in signature order) and the indices construction can already solve.
struct ConstructionState {
  ParamMap params;                       // all manifest params, signature order, defaults filled
  std::vector<IndexRecord> indices;      // the construction indices
  std::vector<IndexValue> slots;         // the plan's own pre-evaluated slots (opaque to callers)
  std::vector<std::int16_t> slot_source; // per slot: -2 not known yet, -1 given, >= 0 the tensor that solved it
  // Set for the workload-row checks: a call that no tensor places runs on meta, so checking a
  // manifest never asks a device runtime for its devices.
  bool meta_calls = false;
};

// The facts one call check establishes, beyond the record.
struct OutputPlan {
  bool present = true;                   // false: a null `nullable` output
  Shape shape;
  DType dtype = DType::float32;
  int alias_input = -1;                  // >= 0: this output is that (written) input itself
  bool is_out_buffer = false;            // this output declares `buffer: out` and the caller passed `out`
};

struct CallCheck {
  std::optional<Device> device;          // the call device; nullopt when it cannot be known
  bool empty_write = false;              // every written tensor has no elements
  int effect_branch = 0;                 // the call's effect branch: its index in compile_op_names()
                                         // (0 when the op has no compile boundary)
  boost::container::small_vector<bool, 6> written;       // per input: this call writes it
  boost::container::small_vector<bool, 6> contiguous;    // per input: declared contiguous: true
  boost::container::small_vector<OutputPlan, 4> outputs;  // per output
  // Where `out` has elements and every view with memory is contiguous: the bytes each input and
  // then `out` reach, [low, high) from its first element. They follow from the facts a call
  // cache matches (shapes, contiguity, dtypes), so a repeat checks `out` against the inputs by
  // comparing addresses (check_writable).
  boost::container::small_vector<std::pair<std::int64_t, std::int64_t>, 7> reach;
  // The accelerator's current device decided the call device: the check is not a function of
  // the call's tensor facts alone, and a call cache must not keep it.
  bool device_from_accelerator = false;
};

struct RooflineFigures {
  double flops = 0;
  double bytes = 0;
};

// One boundary operator and the effects of the calls that enter by it.
struct BoundaryOperator {
  std::string name;                       // as compile_op_names() gives it
  std::vector<std::size_t> written;       // positions in input_names() of the inputs the calls write
  bool out = false;                       // the calls pass `out`
  std::vector<std::size_t> null_outputs;  // positions in output_names() of the outputs that are null
};

// An op class's opaque plan: the signature plan below is the only kind the core makes.
class OpClass::Plan {
 protected:
  Plan() = default;
  ~Plan() = default;
};

class SignaturePlan : public OpClass::Plan {
 public:
  // manifest_plan(op_name) (tileops/extend/manifest.hpp) as the signature plan it is.
  static std::shared_ptr<const SignaturePlan> for_op(std::string_view op_name) {
    return std::static_pointer_cast<const SignaturePlan>(manifest_plan(op_name));
  }
  // Every op name the process's manifest registry defines (what for_op may find), sorted.
  static std::vector<std::string> manifest_op_names();
  // compile_manifest_entry (tileops/extend/manifest.hpp) as the signature plan it is.
  static std::shared_ptr<const SignaturePlan> from_yaml(std::string_view yaml, std::string_view op_name,
                                                        std::string_view file = "<yaml>") {
    return std::static_pointer_cast<const SignaturePlan>(compile_manifest_entry(yaml, op_name, file));
  }

  virtual ~SignaturePlan() = default;

  virtual const OpSpec& spec() const = 0;
  virtual std::string_view op_name() const = 0;
  virtual std::string_view family() const = 0;

  // Manifest parameter names, in signature order (what a target builder receives).
  virtual const std::vector<std::string>& param_names() const = 0;
  // Positions in param_names() of the construction-time tensors that do not declare
  // `device: cpu`: a call runs with them on its call device.
  virtual const std::vector<std::size_t>& call_device_params() const = 0;
  // signature.inputs names in order, and whether each is optional (`optional: true` or an
  // expression).
  virtual const std::vector<std::string>& input_names() const = 0;
  virtual const std::vector<std::string>& output_names() const = 0;
  // Index of input `name`, or -1.
  virtual int input_index(std::string_view name) const = 0;

  // The spec has at least one call-time tensor input.
  virtual bool has_call_time_tensor_input() const = 0;
  // The spec has a `composition`; its stage names in order (empty otherwise).
  virtual bool has_composition() const = 0;
  virtual const std::vector<std::string>& composition_stages() const = 0;

  // One boundary operator name per effect branch the spec admits:
  // "tileops::<family>_<snake_case(op without "Op")>" (the family written once when the snake
  // name already starts with it, e.g. "tileops::gemm_fwd") plus "_writes_<input>" per written
  // input, "_out" when `out` is passed, "_without_<output>" per null output, in that order.
  // Branches with fewer effects come first: index 0 is the plain branch when the spec admits
  // one. Empty when the op has no compile boundary (no call-time tensor input, or a
  // composition).
  virtual const std::vector<std::string>& compile_op_names() const = 0;
  // compile_op_names() with the effects each stands for, in the same order.
  virtual const std::vector<BoundaryOperator>& boundary_operators() const = 0;
  // The position in compile_op_names() of the boundary operator a call of an instance
  // constructed as `state` enters by when it passes the inputs `present` marks (one flag per
  // input) and, when `out_passed`, the `out` buffer. Effects depend on parameters and presence
  // only, so no tensor is needed. Throws TypeError when the op has no compile boundary,
  // `present` does not hold one flag per input, a required input is absent (or one a
  // discriminant excludes is present), or `out` is passed to an op that takes none.
  virtual std::size_t boundary_for(const ConstructionState& state, std::span<const bool> present,
                                   bool out_passed) const = 0;

  // Construction check: `given` holds the constructor's manifest parameter values (a parameter
  // left out takes its default). Checks names (unknown ones and missing required ones),
  // types, dtype-parameter sets, construction-time tensors, and the refinements decidable from
  // parameters alone. Throws TypeError (wrong kind, unknown/missing name) or ValueError
  // (failed refinement), naming the op, the declaration and the value seen.
  virtual ConstructionState check_construction(const ParamMap& given) const = 0;

  // Call check, in the documented order: presence of each tensor, domain restrictions, type
  // family branch, unification of shapes and dtypes (solving indices), remaining refinements,
  // the call device (call-time tensors, else a `device` parameter, else construction-time
  // tensors, else the accelerator's current device), device agreement (every tensor but
  // `device: cpu` ones on the call device), declared contiguity, output-buffer preconditions.
  // Fills `check` and `record` (indices, branch_key, device, tensors, traffic, written,
  // has_out; not stages). Throws TypeError (missing required tensor, dtype outside the
  // declared set or disagreeing with its index, device mismatch) or ValueError (shape that does
  // not unify, failed refinement, non-contiguous where declared, bad `out`), e.g.
  // "RMSNormFwdOp: input 'weight' shape [4095] does not match [*normalized_shape] = [4096]".
  // Allocates nothing beyond the record's and check's own storage (the working check state is the
  // calling thread's, reused across calls). Beyond `state`, it reads of each tensor only its
  // presence, dtype, shape and device and whether it is contiguous, unless
  // check.device_from_accelerator: an op's call cache replays it for calls with the same facts.
  // The record's names and branch_key view the plan.
  virtual void check_call(const ConstructionState& state, const CallArgs& args, CallCheck& check,
                          SignatureCall& record) const = 0;

  // The part of check_call that reads more than the tensors' facts: throws ValueError when the
  // call writes read-only memory (a mutated input or the `out` buffer of a DLPack import
  // flagged read-only), when `out` has strides under which its elements may share memory, or
  // when `out` overlaps an input other than as that input itself where the manifest's
  // may_alias allows it. A replayed check runs it again.
  virtual void check_writable(const CallArgs& args, const CallCheck& check) const = 0;

  // The outputs of a call that runs no implementation (an empty write, or a meta call): new
  // tensors on check.device with the checked shapes and dtypes; `out` and aliased written
  // inputs are returned as passed; null outputs undefined.
  virtual OpOutputs make_outputs(const CallCheck& check, const CallArgs& args) const = 0;

  // Result check: the number of outputs and which are null, each output's shape, dtype,
  // device and layout; `out`/`alias` outputs must be those very tensor objects; other outputs
  // must not share storage with any input. Throws RuntimeError naming the output and what
  // differs (an implementation broke the signature).
  virtual void check_result(const CallCheck& check, const CallArgs& args, const OpOutputs& outputs) const = 0;

  // Every case of every workload row, in manifest order; input devices are left at cpu.
  // `cap`, when given, maps each Dim index value and each axis of a Shape index value a row
  // gives to the value used instead (e.g. min(value, 64)), so that tests can run real-model
  // rows scaled down; parameters are never changed.
  using IndexCap = std::function<std::int64_t(std::string_view index, std::int64_t value)>;
  virtual std::vector<WorkloadCase> workload_cases(const IndexCap& cap = {}) const = 0;

  // (flops, bytes) of a recorded call from the manifest's roofline (bytes derived from the
  // traffic when the manifest gives none).
  virtual RooflineFigures eval_roofline(const SignatureCall& record) const = 0;
};

// The signature plan of `cls`.
inline const SignaturePlan& signature_plan(const OpClass& cls) { return static_cast<const SignaturePlan&>(cls.plan()); }

}  // namespace tileops
