// Remembered call checks: a call whose tensors have the presence, dtypes, shapes, devices and
// contiguity of an earlier successful call under the same construction state gets that call's
// check and record; any other call is checked in full.
#include <doctest/doctest.h>

#include "signature/plan_support.hpp"
#include "support/host_runtime.hpp"
#include "tileops/extend/device_runtime.hpp"

using namespace tileops;
using test::expect_error;
using test::host;

namespace {

void check_same(const SignatureCall& a, const SignatureCall& b) {
  CHECK(a.op == b.op);
  CHECK(a.branch_key == b.branch_key);
  CHECK(a.device == b.device);
  CHECK(a.has_out == b.has_out);
  REQUIRE(a.indices.size() == b.indices.size());
  for (std::size_t i = 0; i < a.indices.size(); ++i) {
    CHECK(a.indices[i].name == b.indices[i].name);
    CHECK(a.indices[i].value == b.indices[i].value);
  }
  REQUIRE(a.tensors.size() == b.tensors.size());
  for (std::size_t i = 0; i < a.tensors.size(); ++i) {
    CHECK(a.tensors[i].name == b.tensors[i].name);
    CHECK(a.tensors[i].shape == b.tensors[i].shape);
    CHECK(a.tensors[i].dtype == b.tensors[i].dtype);
  }
  REQUIRE(a.traffic.size() == b.traffic.size());
  for (std::size_t i = 0; i < a.traffic.size(); ++i) {
    CHECK(a.traffic[i].name == b.traffic[i].name);
    CHECK(a.traffic[i].reads == b.traffic[i].reads);
    CHECK(a.traffic[i].writes == b.traffic[i].writes);
    CHECK(a.traffic[i].bytes == b.traffic[i].bytes);
  }
  CHECK(a.written == b.written);
}


}  // namespace

TEST_CASE("a call with the tensor facts of an earlier one gets the same check and record") {
  const auto p = test::plan("RMSNormFwdOp");
  const ConstructionState st = p->check_construction({{"normalized_shape", std::vector<std::int64_t>{8}}});
  std::vector<Tensor> first{host({4, 8}, DType::bfloat16), host({8}, DType::bfloat16)};
  CallCheck first_check;
  SignatureCall first_record;
  p->check_call(st, CallArgs{first, Tensor()}, first_check, first_record);
  // Other tensor objects with the same facts (strides matter only where contiguity is declared).
  std::vector<Tensor> again{host({8, 4}, DType::bfloat16).transpose(0, 1), host({8}, DType::bfloat16)};
  CallCheck check;
  SignatureCall record;
  p->check_call(st, CallArgs{again, Tensor()}, check, record);
  check_same(record, first_record);
  CHECK(value_str(*record.index("B")) == "[4]");
  CHECK(check.device == first_check.device);
  CHECK(check.effect_branch == first_check.effect_branch);
  CHECK(check.empty_write == first_check.empty_write);
  CHECK(check.written == first_check.written);
  CHECK(check.contiguous == first_check.contiguous);
  REQUIRE(check.outputs.size() == 1);
  CHECK(check.outputs[0].shape == Shape{4, 8});
  CHECK(check.outputs[0].dtype == DType::bfloat16);
  // A record that is reused is overwritten, not appended to.
  p->check_call(st, CallArgs{again, Tensor()}, check, record);
  check_same(record, first_record);
}

TEST_CASE("a remembered call does not excuse a later one with other tensor facts") {
  const auto p = test::plan("RMSNormFwdOp");
  const ConstructionState st = p->check_construction({{"normalized_shape", std::vector<std::int64_t>{8}}});
  CallCheck check;
  SignatureCall record;
  std::vector<Tensor> ok{host({4, 8}, DType::bfloat16), host({8}, DType::bfloat16)};
  p->check_call(st, CallArgs{ok, Tensor()}, check, record);
  std::vector<Tensor> bad_shape{host({4, 8}, DType::bfloat16), host({7}, DType::bfloat16)};
  expect_error<ValueError>([&] { p->check_call(st, CallArgs{bad_shape, Tensor()}, check, record); },
                           "RMSNormFwdOp: input 'weight' shape [7] does not match [*normalized_shape] = [8]");
  std::vector<Tensor> bad_dtype{host({4, 8}, DType::bfloat16), host({8}, DType::float16)};
  expect_error<TypeError>([&] { p->check_call(st, CallArgs{bad_dtype, Tensor()}, check, record); },
                          "RMSNormFwdOp: input 'weight' dtype float16 does not match T = bfloat16");
  std::vector<Tensor> meta_weight{host({4, 8}, DType::bfloat16), test::meta({8}, DType::bfloat16)};
  expect_error<TypeError>([&] { p->check_call(st, CallArgs{meta_weight, Tensor()}, check, record); },
                          "RMSNormFwdOp: input 'x' is on cpu, but the call runs on meta");
  // Without the optional weight: a check of its own.
  std::vector<Tensor> no_weight{host({4, 8}, DType::bfloat16), Tensor()};
  p->check_call(st, CallArgs{no_weight, Tensor()}, check, record);
  CHECK(record.tensor("weight") == nullptr);
  p->check_call(st, CallArgs{ok, Tensor()}, check, record);
  CHECK(record.tensor("weight") != nullptr);
}

TEST_CASE("calls beyond the remembered combinations are checked in full") {
  const auto p = test::plan("GemmFwdOp");
  const ConstructionState st = p->check_construction({});
  CallCheck check;
  SignatureCall record;
  for (std::int64_t m = 1; m <= 20; ++m) {
    std::vector<Tensor> in{host({m, 8}), host({3, 8})};
    p->check_call(st, CallArgs{in, Tensor()}, check, record);
    CHECK(value_str(*record.index("M")) == std::to_string(m));
    CHECK(check.outputs[0].shape == Shape{m, 3});
  }
  std::vector<Tensor> first{host({1, 8}), host({3, 8})};
  p->check_call(st, CallArgs{first, Tensor()}, check, record);
  CHECK(value_str(*record.index("M")) == "1");
  std::vector<Tensor> bad{host({20, 8}), host({3, 9})};
  expect_error<ValueError>([&] { p->check_call(st, CallArgs{bad, Tensor()}, check, record); }, "GemmFwdOp: input 'b' shape [3, 9]");
}

TEST_CASE("a call device taken from the accelerator is read again on every call") {
  auto accel = std::make_shared<test::HostRuntime>("switchaccel", 2, true);
  register_device_runtime(accel);
  const auto p = test::plan("AlibiFwdOp");
  const ConstructionState st = p->check_construction({{"seq_len", std::int64_t{4}}, {"num_heads", std::int64_t{2}}});
  CallCheck check;
  SignatureCall record;
  p->check_call(st, CallArgs{}, check, record);
  CHECK(check.device == Device(DeviceType::intern("switchaccel"), 0));
  accel->set_current_device(1);
  p->check_call(st, CallArgs{}, check, record);
  CHECK(check.device == Device(DeviceType::intern("switchaccel"), 1));
  CHECK(record.device == Device(DeviceType::intern("switchaccel"), 1));
  CHECK(unregister_device_runtime(DeviceType::intern("switchaccel")));
}
