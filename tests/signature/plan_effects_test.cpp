// Effects of a call: written inputs, aliases and out, empty writes, traffic and the roofline;
// outputs built from the signature and the result check.
#include <doctest/doctest.h>

#include "signature/plan_support.hpp"

using namespace tileops;
using test::expect_error;
using test::host;
using test::meta;
using test::run_call;

TEST_CASE("an empty write: at least one written tensor and every written tensor empty") {
  const ParamMap rms{{"normalized_shape", std::vector<std::int64_t>{4096}}};
  CHECK(run_call(*test::plan("RMSNormFwdOp"), rms, {meta({0, 4096}), Tensor()}).check.empty_write);
  CHECK_FALSE(run_call(*test::plan("RMSNormFwdOp"), rms, {meta({2, 4096}), Tensor()}).check.empty_write);
  // Empty inputs, non-empty output: the implementation runs.
  CHECK_FALSE(run_call(*test::plan("SumFwdOp"), {{"dim", std::int64_t{0}}}, {meta({0, 4})}).check.empty_write);
  // An in-place write of an empty tensor, its alias output not counted twice.
  CHECK(run_call(*test::plan("ReluFwdOp"), {{"inplace", true}}, {meta({0})}).check.empty_write);
  // Null outputs do not count; the returned one is empty.
  const auto bn = test::plan("BatchNormFwdOp");
  CHECK(run_call(*bn, {}, {meta({0, 8}), meta({8}, DType::float32), meta({8}, DType::float32), Tensor(), Tensor()}).check.empty_write);
  // Written inputs count: training writes the (empty) running statistics of zero channels.
  CHECK(run_call(*bn, {{"training", true}}, {meta({4, 0}), meta({0}, DType::float32), meta({0}, DType::float32), Tensor(), Tensor()})
            .check.empty_write);
}

TEST_CASE("traffic: inputs read once, outputs written once, written inputs both, aliases and out counted once") {
  const auto gemm = run_call(*test::plan("GemmFwdOp"), {}, {meta({64, 32}, DType::bfloat16), meta({16, 32}, DType::bfloat16)});
  REQUIRE(gemm.record.traffic.size() == 3);
  CHECK(gemm.record.traffic[0].name == "a");
  CHECK(gemm.record.traffic[0].reads == 1);
  CHECK(gemm.record.traffic[0].writes == 0);
  CHECK(gemm.record.traffic[0].bytes == 64 * 32 * 2);
  CHECK(gemm.record.traffic[2].name == "d");
  CHECK(gemm.record.traffic[2].writes == 1);
  CHECK(gemm.record.traffic[2].bytes == 64 * 16 * 2);
  const auto relu = run_call(*test::plan("ReluFwdOp"), {{"inplace", true}}, {meta({8}, DType::float32)});
  REQUIRE(relu.record.traffic.size() == 1);
  CHECK(relu.record.traffic[0].reads == 1);
  CHECK(relu.record.traffic[0].writes == 1);
  const auto add = run_call(*test::plan("AddFwdOp"), {}, {meta({8}, DType::float32), meta({8}, DType::float32)}, meta({8}, DType::float32));
  REQUIRE(add.record.traffic.size() == 3);
  CHECK(add.record.traffic[2].name == "output");
}

TEST_CASE("eval_roofline evaluates flops and derives bytes from the traffic") {
  const auto p = test::plan("GemmFwdOp");
  const auto c = run_call(*p, {}, {meta({128, 256}, DType::float16), meta({512, 256}, DType::float16)});
  const RooflineFigures r = p->eval_roofline(c.record);
  CHECK(r.flops == doctest::Approx(2.0 * 128 * 512 * 256));
  CHECK(r.bytes == doctest::Approx((128.0 * 256 + 512 * 256 + 128 * 512) * 2));
  const auto rms = test::plan("RMSNormFwdOp");
  const ParamMap params{{"normalized_shape", std::vector<std::int64_t>{64}}};
  CHECK(rms->eval_roofline(run_call(*rms, params, {meta({4, 64}), meta({64})}).record).flops == doctest::Approx(4.0 * 4 * 64));
  CHECK(rms->eval_roofline(run_call(*rms, params, {meta({4, 64}), Tensor()}).record).flops == doctest::Approx(3.0 * 4 * 64));
  const auto bn = test::plan("BatchNormFwdOp");
  const auto train = run_call(*bn, {{"training", true}}, {meta({2, 4}, DType::float32), meta({4}, DType::float32), meta({4}, DType::float32),
                                                        Tensor(), Tensor()});
  // x read, running stats read and written, y, mean and rstd written.
  CHECK(bn->eval_roofline(train.record).bytes == doctest::Approx(32.0 + 2 * 16 * 2 + 32 + 16 + 16));
  expect_error<ValueError>([&] { p->eval_roofline(train.record); }, "GemmFwdOp: cannot evaluate the roofline of a BatchNormFwdOp call");
}

TEST_CASE("an explicit roofline bytes formula reads bytes(t) and present(t)") {
  const auto p = SignaturePlan::from_yaml(R"yaml(
GatherFwdOp:
  family: test
  status: spec-only
  signature:
    forall: {N: Dim, K: Dim, T: "DType[float32]"}
    inputs:
      table: {dtype: T, shape: "[N]"}
      index: {dtype: int64, shape: "[K]"}
      scale: {dtype: T, shape: "[K]", optional: true}
    outputs:
      y: {dtype: T, shape: "[K]"}
  workloads:
  - {N: 16, K: 4, dtype_cases: [{T: float32}], label: unit}
  roofline:
    flops: "0"
    bytes: "bytes(index) + 2 * bytes(y) + (bytes(scale) if present(scale) else 0)"
)yaml",
                                          "GatherFwdOp");
  const auto c = run_call(*p, {}, {meta({16}, DType::float32), meta({4}, DType::int64), Tensor()});
  CHECK(p->eval_roofline(c.record).bytes == doctest::Approx(32.0 + 2 * 16));
  const auto s = run_call(*p, {}, {meta({16}, DType::float32), meta({4}, DType::int64), meta({4}, DType::float32)});
  CHECK(p->eval_roofline(s.record).bytes == doctest::Approx(32.0 + 2 * 16 + 16));
}

TEST_CASE("make_outputs builds outputs from the signature: new, aliased, out and null") {
  const auto relu = test::plan("ReluFwdOp");
  const Tensor x = meta({3, 5});
  const std::vector<Tensor> in{x};
  const auto plain = run_call(*relu, {}, in);
  const OpOutputs made = relu->make_outputs(plain.check, CallArgs{in, Tensor()});
  REQUIRE(made.size() == 1);
  CHECK(made[0].device() == Device::meta());
  CHECK(shape_str(made[0].shape()) == "[3, 5]");
  CHECK_FALSE(made[0].is_same(x));
  const auto inplace = run_call(*relu, {{"inplace", true}}, in);
  CHECK(relu->make_outputs(inplace.check, CallArgs{in, Tensor()})[0].is_same(x));

  const auto add = test::plan("AddFwdOp");
  const Tensor out = host({4}, DType::float32);
  const std::vector<Tensor> ab{host({4}, DType::float32), host({4}, DType::float32)};
  const auto with_out = run_call(*add, {}, ab, out);
  CHECK(add->make_outputs(with_out.check, CallArgs{ab, out})[0].is_same(out));
  const auto fresh = run_call(*add, {}, ab);
  const OpOutputs alloc = add->make_outputs(fresh.check, CallArgs{ab, Tensor()});
  CHECK(alloc[0].device() == Device::cpu());
  CHECK(alloc[0].dtype() == DType::float32);

  const auto bn = test::plan("BatchNormFwdOp");
  const std::vector<Tensor> bn_in{meta({2, 4}), meta({4}, DType::float32), meta({4}, DType::float32), Tensor(), Tensor()};
  const auto eval = run_call(*bn, {}, bn_in);
  const OpOutputs bn_out = bn->make_outputs(eval.check, CallArgs{bn_in, Tensor()});
  REQUIRE(bn_out.size() == 3);
  CHECK(bn_out[0].defined());
  CHECK_FALSE(bn_out[1].defined());
  CHECK_FALSE(bn_out[2].defined());
  CHECK_NOTHROW(bn->check_result(eval.check, CallArgs{bn_in, Tensor()}, bn_out));
}

TEST_CASE("check_result: the implementation returned what the signature says, or a RuntimeError") {
  const auto gemm = test::plan("GemmFwdOp");
  const std::vector<Tensor> in{host({4, 8}, DType::float32), host({2, 8}, DType::float32)};
  const auto c = run_call(*gemm, {}, in);
  const CallArgs args{in, Tensor()};
  CHECK_NOTHROW(gemm->check_result(c.check, args, OpOutputs{host({4, 2}, DType::float32)}));
  expect_error<RuntimeError>([&] { gemm->check_result(c.check, args, OpOutputs{}); },
                             "GemmFwdOp: the implementation returned 0 output(s); the signature declares 1");
  expect_error<RuntimeError>([&] { gemm->check_result(c.check, args, OpOutputs{Tensor()}); },
                             "GemmFwdOp: output 'd' is None, but the signature returns it on this call");
  expect_error<RuntimeError>([&] { gemm->check_result(c.check, args, OpOutputs{host({4, 3}, DType::float32)}); },
                             "GemmFwdOp: output 'd' has shape [4, 3], but the signature gives [M, N] = [4, 2]");
  expect_error<RuntimeError>([&] { gemm->check_result(c.check, args, OpOutputs{host({4, 2}, DType::float16)}); },
                             "GemmFwdOp: output 'd' has dtype float16, but the signature gives T = float32");
  expect_error<RuntimeError>([&] { gemm->check_result(c.check, args, OpOutputs{meta({4, 2}, DType::float32)}); },
                             "GemmFwdOp: output 'd' is on meta, but the call device is cpu");
  expect_error<RuntimeError>([&] { gemm->check_result(c.check, args, OpOutputs{host({2, 4}, DType::float32).transpose(0, 1)}); },
                             "GemmFwdOp: output 'd' is not contiguous (strides [1, 4]); a new output is always contiguous");
  expect_error<RuntimeError>([&] { gemm->check_result(c.check, args, OpOutputs{in[0].view({32}).slice(0, 0, 8).view({4, 2})}); },
                             "GemmFwdOp: output 'd' shares storage with input 'a'; only alias and out outputs may");

  const auto relu = test::plan("ReluFwdOp");
  const std::vector<Tensor> x{host({4}, DType::float32)};
  const auto inplace = run_call(*relu, {{"inplace", true}}, x);
  expect_error<RuntimeError>([&] { relu->check_result(inplace.check, CallArgs{x, Tensor()}, OpOutputs{host({4}, DType::float32)}); },
                             "ReluFwdOp: output 'output' must be input 'input' itself (alias; the call writes that input)");
  const auto add = test::plan("AddFwdOp");
  const Tensor out = host({4}, DType::float32);
  const std::vector<Tensor> ab{host({4}, DType::float32), host({4}, DType::float32)};
  const auto with_out = run_call(*add, {}, ab, out);
  expect_error<RuntimeError>([&] { add->check_result(with_out.check, CallArgs{ab, out}, OpOutputs{host({4}, DType::float32)}); },
                             "AddFwdOp: output 'output' must be the 'out' buffer itself");
  const auto bn = test::plan("BatchNormFwdOp");
  const std::vector<Tensor> bn_in{host({2, 4}), host({4}, DType::float32), host({4}, DType::float32), Tensor(), Tensor()};
  const auto eval = run_call(*bn, {}, bn_in);
  expect_error<RuntimeError>([&] {
    bn->check_result(eval.check, CallArgs{bn_in, Tensor()}, OpOutputs{host({2, 4}), host({4}, DType::float32), Tensor()});
  }, "BatchNormFwdOp: output 'mean' must be None on this call ('training' is false), but a tensor was returned");
}

TEST_CASE("the SignatureCall record: lookups and a readable dump") {
  const auto c = run_call(*test::plan("GemmFwdOp"), {{"trans_b", false}}, {meta({4, 8}, DType::float32), meta({8, 2}, DType::float32)});
  CHECK(c.record.op == "GemmFwdOp");
  CHECK(c.record.index("trans_b") != nullptr);
  CHECK(c.record.index("Z") == nullptr);
  CHECK(c.record.tensor("a") != nullptr);
  CHECK(c.record.tensor("zz") == nullptr);
  CHECK(c.record.stage_calls("gate_up").empty());
  const std::string dump = c.record.str();
  CHECK(dump.find("GemmFwdOp call") == 0);
  CHECK(dump.find("device: meta") != std::string::npos);
  CHECK(dump.find("branch: trans_a=false,trans_b=false") != std::string::npos);
  CHECK(dump.find("d: float32[4, 2]") != std::string::npos);
  CHECK(dump.find("a: 1 read(s), 0 write(s) of 128 bytes") != std::string::npos);
}
