// Outputs built from the signature (empty writes and meta calls) and the result check.
#include "signature/compiled_plan.hpp"

namespace tileops::detail {

OpOutputs CompiledPlan::make_outputs(const CallCheck& check, const CallArgs& args) const {
  OpOutputs outs;
  for (int o = 0; o < n_outputs_; ++o) {
    const OutputPlan& p = check.outputs[static_cast<std::size_t>(o)];
    if (!p.present) {
      outs.emplace_back();
    } else if (p.alias_input >= 0) {
      outs.push_back(args.inputs[static_cast<std::size_t>(p.alias_input)]);
    } else if (p.is_out_buffer) {
      outs.push_back(args.out);
    } else if (!check.device) {
      throw OpNotAvailableError(message("cannot allocate output '" + output_names_[static_cast<std::size_t>(o)] +
                                        "': the call device is unknown (no tensor, no device parameter and no "
                                        "accelerator decides it)"));
    } else {
      outs.push_back(Tensor::empty(p.shape, p.dtype, *check.device));
    }
  }
  return outs;
}

void CompiledPlan::check_result(const CallCheck& check, const CallArgs& args, const OpOutputs& outputs) const {
  if (static_cast<int>(outputs.size()) != n_outputs_) {
    throw RuntimeError(message("the implementation returned " + std::to_string(outputs.size()) +
                               " output(s); the signature declares " + std::to_string(n_outputs_)));
  }
  for (int o = 0; o < n_outputs_; ++o) {
    const OutputPlan& p = check.outputs[static_cast<std::size_t>(o)];
    const TensorDecl& t = tensors_[static_cast<std::size_t>(output_tensor(o))];
    const Tensor& x = outputs[static_cast<std::size_t>(o)];
    const auto what = [&t] { return "output '" + t.name + "'"; };
    if (!p.present) {
      if (x.defined()) {
        throw RuntimeError(message(what() + " must be None on this call ('" + t.nullable->source +
                                   "' is false), but a tensor was returned"));
      }
      continue;
    }
    if (!x.defined()) throw RuntimeError(message(what() + " is None, but the signature returns it on this call"));
    if (p.alias_input >= 0) {
      if (!x.is_same(args.inputs[static_cast<std::size_t>(p.alias_input)])) {
        throw RuntimeError(message(what() + " must be input '" + input(p.alias_input).name +
                                   "' itself (alias; the call writes that input), but another tensor was returned"));
      }
      continue;
    }
    if (p.is_out_buffer) {
      if (!x.is_same(args.out)) throw RuntimeError(message(what() + " must be the 'out' buffer itself, but another tensor was returned"));
      continue;
    }
    const Shape& shape = x.shape();
    if (shape.size() != p.shape.size() || !std::equal(p.shape.begin(), p.shape.end(), shape.begin())) {
      throw RuntimeError(message(what() + " has shape " + shape_str(shape) + ", but the signature gives " + t.shape.text +
                                 " = " + shape_str(p.shape)));
    }
    if (x.dtype() != p.dtype) {
      throw RuntimeError(message(what() + " has dtype " + std::string(dtype_name(x.dtype())) + ", but the signature gives " +
                                 t.dtype.text + " = " + std::string(dtype_name(p.dtype))));
    }
    if (check.device && !(x.device() == *check.device)) {
      throw RuntimeError(message(what() + " is on " + x.device().str() + ", but the call device is " + check.device->str()));
    }
    if (!x.is_contiguous()) {
      throw RuntimeError(message(what() + " is not contiguous (strides " + shape_str(x.strides()) +
                                 "); a new output is always contiguous"));
    }
    for (int i = 0; i < n_inputs_; ++i) {
      if (x.shares_storage_with(args.inputs[static_cast<std::size_t>(i)])) {
        throw RuntimeError(message(what() + " shares storage with input '" + input(i).name +
                                   "'; only alias and out outputs may"));
      }
    }
  }
}

}  // namespace tileops::detail
