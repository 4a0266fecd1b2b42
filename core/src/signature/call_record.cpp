// Filling the SignatureCall record of a checked call.
#include "signature/compiled_plan.hpp"
#include "tileops/errors.hpp"

namespace tileops::detail {
namespace {

[[noreturn, gnu::cold]] void too_large(const SignatureCall& record, std::string_view name, const Shape& shape, DType dtype) {
  throw ValueError(std::string(record.op) + ": tensor '" + std::string(name) + "' shape " + shape_str(shape) + " of " +
                   std::string(dtype_name(dtype)) + " does not fit in 2^63 bytes");
}

// Records tensor `name` and its traffic.
inline void add_tensor(SignatureCall& record, std::string_view name, const Shape& shape, DType dtype, int reads, int writes) {
  std::int64_t bytes = 0;
  if (!tensor_bytes(shape, dtype, bytes)) too_large(record, name, shape, dtype);
  record.tensors.emplace_back(name, shape, dtype);
  record.traffic.emplace_back(name, reads, writes, bytes);
}

}  // namespace

bool tensor_bytes(ShapeView shape, DType dtype, std::int64_t& bytes) {
  std::int64_t bound = static_cast<std::int64_t>(dtype_size(dtype));
  bytes = bound;
  for (std::int64_t d : shape) {
    if (__builtin_mul_overflow(bound, d > 1 ? d : 1, &bound)) return false;
    bytes *= d;
  }
  return true;
}

void CompiledPlan::fill_record(const CallArgs& args, const ConstructionState& st, const CallCheck& check,
                               const CheckState& f, SignatureCall& record) const {
  record.op = spec_.name;
  record.indices.clear();
  const Val* values = f.slots.data();
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    if (!values[s].known()) continue;
    if (st.slot_source[s] != -2) {
      record.indices.emplace_back(slots_[s].name, st.slots[s]);  // known at construction: converted there
    } else {
      record.indices.emplace_back(slots_[s].name, expr::AsIndexValue{values[s]});
    }
  }
  std::size_t key = 0;
  for (std::size_t s = 0; s < subjects_.size(); ++s) key = key * subjects_[s].domain.size() + f.subject[s];
  record.branch_key = branch_keys_.empty() ? std::string_view() : std::string_view(branch_keys_[key]);
  record.device = check.device;
  record.has_out = args.out.defined();
  record.tensors.clear();
  record.traffic.clear();
  record.written.clear();
  for (int i = 0; i < n_inputs_; ++i) {
    const Tensor& x = args.inputs[static_cast<std::size_t>(i)];
    if (!x.defined()) continue;
    const TensorDecl& t = input(i);
    const bool written = check.written[static_cast<std::size_t>(i)];
    add_tensor(record, t.name, x.shape(), x.dtype(), t.write_only ? 0 : 1, written ? 1 : 0);
    if (written) record.written.push_back(t.name);
  }
  if (n_construction_ > 0) {
    for (std::size_t k = 0; k < params_.size(); ++k) {
      const ParamInfo& p = params_[k];
      const Value& v = st.params.items()[k].second;
      if (!p.is_tensor || !std::holds_alternative<Tensor>(v)) continue;
      const Tensor& x = std::get<Tensor>(v);
      add_tensor(record, tensors_[static_cast<std::size_t>(p.tensor)].name, x.shape(), x.dtype(), 1, 0);
    }
  }
  for (int o = 0; o < n_outputs_; ++o) {
    const OutputPlan& out = check.outputs[static_cast<std::size_t>(o)];
    if (!out.present) continue;
    const std::string& name = tensors_[static_cast<std::size_t>(output_tensor(o))].name;
    if (out.alias_input < 0) {
      add_tensor(record, name, out.shape, out.dtype, 0, 1);
    } else {
      record.tensors.emplace_back(name, out.shape, out.dtype);
    }
  }
}

}  // namespace tileops::detail
