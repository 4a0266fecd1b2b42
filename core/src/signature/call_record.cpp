// Filling the SignatureCall record of a checked call.
#include "signature/compiled_plan.hpp"

namespace tileops::detail {
namespace {

std::int64_t byte_size(ShapeView shape, DType dtype) { return shape_numel(shape) * dtype_bits(dtype) / 8; }

}  // namespace

void CompiledPlan::fill_record(const CallArgs& args, const ConstructionState& st, const CallCheck& check, const Frame& f,
                               SignatureCall& record) const {
  record.op = spec_.name;
  record.indices.clear();
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    if (f.slots[s].known()) record.indices.push_back({slots_[s].name, expr::value_from_val(f.slots[s])});
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
    record.tensors.push_back({t.name, x.shape(), x.dtype()});
    record.traffic.push_back({t.name, t.write_only ? 0 : 1, written ? 1 : 0, byte_size(x.shape(), x.dtype())});
    if (written) record.written.push_back(t.name);
  }
  for (std::size_t k = 0; k < params_.size(); ++k) {
    const ParamInfo& p = params_[k];
    const Value& v = st.params.items()[k].second;
    if (!p.is_tensor || !std::holds_alternative<Tensor>(v)) continue;
    const Tensor& x = std::get<Tensor>(v);
    const TensorDecl& t = tensors_[static_cast<std::size_t>(p.tensor)];
    record.tensors.push_back({t.name, x.shape(), x.dtype()});
    record.traffic.push_back({t.name, 1, 0, byte_size(x.shape(), x.dtype())});
  }
  for (int o = 0; o < n_outputs_; ++o) {
    const OutputPlan& out = check.outputs[static_cast<std::size_t>(o)];
    if (!out.present) continue;
    const TensorDecl& t = tensors_[static_cast<std::size_t>(output_tensor(o))];
    record.tensors.push_back({t.name, out.shape, out.dtype});
    if (out.alias_input < 0) record.traffic.push_back({t.name, 0, 1, byte_size(out.shape, out.dtype)});
  }
}

}  // namespace tileops::detail
