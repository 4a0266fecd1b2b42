// Memory lent for one call: borrow_dlpack's views own nothing, and the C API's
// TILEOPS_REF_DLTENSOR reads and writes lent memory, keeps none of it and refuses what it cannot take.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "tileops/c_api.h"
#include "tileops/dlpack.hpp"
#include "tileops/errors.hpp"
#include "tileops/extend/backend.hpp"

using namespace tileops;

namespace {

struct HostArray {
  std::vector<float> values;
  std::vector<std::int64_t> shape;
  DLTensor tensor{};

  explicit HostArray(std::vector<float> v) : values(std::move(v)), shape{static_cast<std::int64_t>(values.size())} {
    tensor.data = values.data();
    tensor.device = {kDLCPU, 0};
    tensor.ndim = 1;
    tensor.dtype = {kDLFloat, 32, 1};
    tensor.shape = shape.data();
  }
};

tileops_tensor_ref lent(DLTensor* t) { return {TILEOPS_REF_DLTENSOR, 0, t}; }

tileops_call call_of(std::size_t n_inputs, tileops_tensor_ref* inputs, tileops_tensor_ref* outputs, std::int32_t* sources) {
  tileops_call call{};
  call.struct_size = sizeof call;
  call.num_inputs = n_inputs;
  call.inputs = inputs;
  call.num_outputs = 1;
  call.outputs = outputs;
  call.output_sources = sources;
  return call;
}

tileops_op* make_relu(const char* target) {
  tileops_params* params = nullptr;
  tileops_op* op = nullptr;
  REQUIRE(tileops_params_create(&params) == nullptr);
  REQUIRE(tileops_op_create("ReluFwdOp", params, target, &op) == nullptr);
  tileops_params_free(params);
  return op;
}

std::string take_message(tileops_status* status, int* kind) {
  REQUIRE(status != nullptr);
  *kind = tileops_status_kind(status);
  std::string message = tileops_status_message(status);
  tileops_status_free(status);
  return message;
}

}  // namespace

TEST_CASE("borrow_dlpack views the memory without owning it, and honours read_only") {
  HostArray a({1, -2, 3});
  {
    Tensor t = borrow_dlpack(a.tensor);
    CHECK(t.data_ptr() == a.values.data());
    CHECK(t.shape() == Shape{3});
    t.set(1, 5);
  }
  CHECK(a.values[1] == 5);  // the tensor is gone and the memory is still the caller's
  const Tensor locked = borrow_dlpack(a.tensor, true);
  CHECK_THROWS_WITH_AS(locked.set(0, 1), doctest::Contains("read-only"), ValueError);
  a.tensor.ndim = -1;
  CHECK_THROWS_WITH_AS(borrow_dlpack(a.tensor), doctest::Contains("ndim is -1"), ValueError);
}

TEST_CASE("TILEOPS_REF_DLTENSOR: a lent input is read and written in place, nothing freed") {
  HostArray x({-1, 2, -3});
  tileops_op* relu = make_relu(nullptr);
  tileops_tensor_ref inputs[1] = {lent(&x.tensor)};
  tileops_tensor_ref outputs[1] = {{TILEOPS_REF_TENSOR, 0, nullptr}};
  std::int32_t sources[1] = {99};
  tileops_call call = call_of(1, inputs, outputs, sources);
  REQUIRE(tileops_op_call(relu, &call) == nullptr);
  CHECK(sources[0] == TILEOPS_OUTPUT_NEW);
  tileops_tensor_info info{};
  info.struct_size = sizeof info;
  REQUIRE(tileops_tensor_get_info(static_cast<tileops_tensor*>(outputs[0].ptr), &info) == nullptr);
  CHECK(info.data != x.values.data());
  const auto* y = static_cast<const float*>(info.data);
  CHECK((y[0] == 0 && y[1] == 2 && y[2] == 0));
  CHECK(x.values == std::vector<float>{-1, 2, -3});
  tileops_tensor_free(static_cast<tileops_tensor*>(outputs[0].ptr));
  tileops_op_free(relu);
}

TEST_CASE("TILEOPS_REF_DLTENSOR: read-only lent memory is refused for writing, bad flags and kinds are named") {
  HostArray x({-1, 2});
  tileops_params* params = nullptr;
  tileops_op* relu = nullptr;
  REQUIRE(tileops_params_create(&params) == nullptr);
  REQUIRE(tileops_params_set_bool(params, "inplace", 1) == nullptr);
  REQUIRE(tileops_op_create("ReluFwdOp", params, nullptr, &relu) == nullptr);
  tileops_params_free(params);
  tileops_tensor_ref inputs[1] = {{TILEOPS_REF_DLTENSOR, TILEOPS_DLPACK_READ_ONLY, &x.tensor}};
  tileops_tensor_ref outputs[1] = {{TILEOPS_REF_NONE, 0, nullptr}};
  tileops_call call = call_of(1, inputs, outputs, nullptr);
  int kind = 0;
  CHECK(take_message(tileops_op_call(relu, &call), &kind).find("is read-only") != std::string::npos);
  CHECK(kind == TILEOPS_VALUE_ERROR);
  CHECK(x.values == std::vector<float>{-1, 2});

  inputs[0] = {TILEOPS_REF_DLTENSOR, TILEOPS_DLPACK_LEGACY_BOOL, &x.tensor};
  CHECK(take_message(tileops_op_call(relu, &call), &kind).find("DLTensor: flags 2 hold bits other than 5") !=
        std::string::npos);
  CHECK(kind == TILEOPS_TYPE_ERROR);

  inputs[0] = lent(nullptr);
  CHECK(take_message(tileops_op_call(relu, &call), &kind).find("tileops_call.inputs") != std::string::npos);
  CHECK(kind == TILEOPS_TYPE_ERROR);

  inputs[0] = lent(&x.tensor);
  outputs[0] = {TILEOPS_REF_DLTENSOR, 0, nullptr};
  CHECK(take_message(tileops_op_call(relu, &call), &kind).find("ref kind 4 is none of") != std::string::npos);
  CHECK(kind == TILEOPS_TYPE_ERROR);

  outputs[0] = {TILEOPS_REF_NONE, 0, nullptr};
  REQUIRE(tileops_op_call(relu, &call) == nullptr);
  CHECK(x.values == std::vector<float>{0, 2});
  tileops_op_free(relu);
}

TEST_CASE("TILEOPS_REF_DLTENSOR: no new output may keep viewing lent memory") {
  // A target whose ReLU hands back a view of its input: the view would outlive the loan, and
  // the call's result check refuses it as it refuses any new output sharing an input's storage.
  Registrar reg("lent_view_test");
  reg.register_detector("lent_view_t", [](const Device& d) { return d.is_cpu(); });
  reg.register_kernel_builder("ReluFwdOp", "lent_view_t", [](auto, const ParamMap&) -> TargetKernel {
    return [](const CallArgs& args) -> OpOutputs { return {args.inputs[0].view(args.inputs[0].shape())}; };
  });
  HostArray x({4, 5, 6});
  tileops_op* relu = make_relu("lent_view_t");
  tileops_tensor_ref inputs[1] = {lent(&x.tensor)};
  tileops_tensor_ref outputs[1] = {{TILEOPS_REF_DLPACK, 0, nullptr}};
  tileops_call call = call_of(1, inputs, outputs, nullptr);
  int kind = 0;
  CHECK(take_message(tileops_op_call(relu, &call), &kind).find("output 'output' shares storage with input 'input'") !=
        std::string::npos);
  CHECK(kind == TILEOPS_RUNTIME_ERROR);
  CHECK(outputs[0].ptr == nullptr);
  tileops_op_free(relu);
}
