// tileops_op_call: one op call from C, its tensors crossing as handles or DLPack.
#include <exception>
#include <optional>
#include <string>

#include <boost/container/small_vector.hpp>

#include "c_api/dlpack_refs.hpp"
#include "c_api/handles.hpp"
#include "manifest/op_spec.hpp"
#include "signature/signature_plan.hpp"
#include "tileops/dlpack.hpp"
#include "tileops/errors.hpp"
#include "tileops/stream.hpp"

namespace tileops::c_api {
namespace {

using Tensors = boost::container::small_vector<Tensor, 8>;

// The tensors of a call's refs: its inputs, `out` and the output buffers.
struct CallTensors {
  Tensors inputs;
  Tensor out;
  Tensors buffers;  // empty when the caller gave none
};

// Resolves every ref of `call`. Once one fails the rest are released unread, so that each
// DLPack ref is owned exactly once whatever happens; then the first error is rethrown.
CallTensors take_refs(const tileops_call& call) {
  CallTensors taken;
  std::exception_ptr failure;
  if (call.num_inputs > 0 && call.inputs == nullptr) {
    failure = std::make_exception_ptr(TypeError("tileops_call.inputs is NULL, but num_inputs is " +
                                                std::to_string(call.num_inputs)));
  }
  const auto take = [&](const tileops_tensor_ref& ref, const char* what) {
    if (failure) {
      release_ref(ref);
      return Tensor();
    }
    try {
      return resolve_ref(ref, what);
    } catch (...) {
      failure = std::current_exception();
      return Tensor();
    }
  };
  if (!failure) {
    for (std::size_t i = 0; i < call.num_inputs; ++i) taken.inputs.push_back(take(call.inputs[i], "tileops_call.inputs"));
  }
  taken.out = take(call.out, "tileops_call.out");
  if (call.output_buffers != nullptr) {
    for (std::size_t o = 0; o < call.num_outputs; ++o) {
      taken.buffers.push_back(take(call.output_buffers[o], "tileops_call.output_buffers"));
    }
  }
  if (failure) std::rethrow_exception(failure);
  return taken;
}

void check_counts(const Op& op, const tileops_call& call) {
  const SignaturePlan& plan = signature_plan(op.op_class());
  if (call.num_inputs != plan.input_names().size()) {
    throw TypeError(op.name() + " takes " + std::to_string(plan.input_names().size()) + " input ref(s), got " +
                    std::to_string(call.num_inputs));
  }
  if (call.num_outputs != plan.output_names().size()) {
    throw TypeError(op.name() + " gives " + std::to_string(plan.output_names().size()) + " output(s), but the call has " +
                    std::to_string(call.num_outputs) + " output ref(s)");
  }
  if (call.num_outputs > 0) require_pointer(call.outputs, "tileops_call.outputs");
  for (std::size_t o = 0; o < call.num_outputs; ++o) {
    const int kind = call.outputs[o].kind;
    if (kind < TILEOPS_REF_NONE || kind > TILEOPS_REF_DLPACK_VERSIONED) {
      throw TypeError("tileops_call.outputs[" + std::to_string(o) + "]: ref kind " + std::to_string(kind) +
                      " is none of TILEOPS_REF_NONE (0), _TENSOR (1), _DLPACK (2), _DLPACK_VERSIONED (3)");
    }
  }
}

// The position of the output declaring `buffer: out`, or -1.
int out_output(const Op& op) {
  const auto& outputs = signature_plan(op.op_class()).spec().outputs;
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    if (outputs[o].buffer_out) return static_cast<int>(o);
  }
  return -1;
}

std::string describe(const Tensor& t) {
  return std::string(dtype_name(t.dtype())) + shape_str(t.shape()) + " on " + t.device().str();
}

// Copies output `o` into its buffer after checking that the buffer can hold it.
void copy_to_buffer(const Op& op, std::size_t o, const Tensor& output, const Tensor& buffer) {
  if (buffer.shape() != output.shape() || buffer.dtype() != output.dtype() || buffer.device() != output.device()) {
    throw ValueError(op.name() + ": the buffer of output '" + signature_plan(op.op_class()).output_names()[o] + "' is " +
                     describe(buffer) + ", but the output is " + describe(output));
  }
  buffer.copy_from(output);
}

// Sets each output ref to its tensor; on a failure releases those already set and rethrows.
void fill_outputs(tileops_call& call, const OpOutputs& outputs) {
  std::size_t filled = 0;
  try {
    for (; filled < call.num_outputs; ++filled) fill_ref(call.outputs[filled], outputs[filled]);
  } catch (...) {
    for (std::size_t o = 0; o < filled; ++o) clear_filled_ref(call.outputs[o]);
    throw;
  }
}

void run_call(Op& op, tileops_call& call, CallTensors& taken) {
  const int out_index = out_output(op);
  bool buffer_as_out = false;
  if (!taken.buffers.empty() && out_index >= 0 && taken.buffers[static_cast<std::size_t>(out_index)].defined()) {
    if (taken.out.defined()) {
      throw TypeError(op.name() + ": output '" + signature_plan(op.op_class()).output_names()[static_cast<std::size_t>(out_index)] +
                      "' has both an 'out' buffer and an output buffer; pass one");
    }
    taken.out = taken.buffers[static_cast<std::size_t>(out_index)];
    buffer_as_out = true;
  }
  OpOutputs outputs = op.call(CallArgs(taken.inputs, taken.out));
  boost::container::small_vector<int32_t, 4> sources(outputs.size(), TILEOPS_OUTPUT_NEW);
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const Tensor& t = outputs[o];
    if (!t.defined()) continue;
    if (taken.out.defined() && t.is_same(taken.out)) {
      sources[o] = buffer_as_out ? TILEOPS_OUTPUT_BUFFER : TILEOPS_OUTPUT_OUT;
      continue;
    }
    for (std::size_t i = 0; i < taken.inputs.size(); ++i) {
      if (taken.inputs[i].defined() && t.is_same(taken.inputs[i])) sources[o] = static_cast<int32_t>(i);
    }
    if (!taken.buffers.empty() && taken.buffers[o].defined()) {
      copy_to_buffer(op, o, t, taken.buffers[o]);
      outputs[o] = taken.buffers[o];
      sources[o] = TILEOPS_OUTPUT_BUFFER;
    }
  }
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    if (sources[o] != TILEOPS_OUTPUT_NEW) outputs[o] = Tensor();
  }
  fill_outputs(call, outputs);
  if (call.output_sources != nullptr) {
    for (std::size_t o = 0; o < outputs.size(); ++o) call.output_sources[o] = sources[o];
  }
}

}  // namespace
}  // namespace tileops::c_api

using namespace tileops;
using namespace tileops::c_api;

extern "C" tileops_status* tileops_op_call(tileops_op* op, tileops_call* call) {
  return guarded([&] {
    require_pointer(call, "call");
    check_struct_size(call->struct_size, sizeof *call, sizeof *call, "tileops_call");
    if (call->outputs != nullptr) {
      for (std::size_t o = 0; o < call->num_outputs; ++o) call->outputs[o].ptr = nullptr;
    }
    CallTensors taken = take_refs(*call);
    require_pointer(op, "op");
    check_counts(*op->op, *call);
    std::optional<StreamGuard> on_stream;
    if (call->use_stream != 0) on_stream.emplace(from_dlpack_device(call->stream_device), call->stream);
    run_call(*op->op, *call, taken);
  });
}
