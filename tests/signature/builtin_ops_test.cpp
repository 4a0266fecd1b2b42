// The built-in manifests through SignaturePlan::for_op: each op of the first set, a call that
// passes and calls that fail with the exact error kind and message.
#include <doctest/doctest.h>

#include "signature/plan_support.hpp"

using namespace tileops;
using test::expect_error;
using test::meta;
using test::run_call;

TEST_CASE("RMSNormFwdOp: unification of [*B, *normalized_shape], optional weight, eps refinement") {
  const auto p = test::plan("RMSNormFwdOp");
  const ParamMap params{{"normalized_shape", std::vector<std::int64_t>{4096}}};
  const auto ok = run_call(*p, params, {meta({2048, 4096}, DType::bfloat16), meta({4096}, DType::bfloat16)});
  CHECK(value_str(*ok.record.index("B")) == "[2048]");
  CHECK(value_str(*ok.record.index("T")) == "bfloat16");
  CHECK(value_str(*ok.record.index("eps")) == "None");
  REQUIRE(ok.check.outputs.size() == 1);
  CHECK(shape_str(ok.check.outputs[0].shape) == "[2048, 4096]");
  CHECK(ok.check.outputs[0].dtype == DType::bfloat16);
  CHECK(ok.check.device == Device::meta());
  const auto no_weight = run_call(*p, params, {meta({4, 8, 4096}, DType::float32), Tensor()});
  CHECK(value_str(*no_weight.record.index("B")) == "[4, 8]");
  CHECK(no_weight.record.tensor("weight") == nullptr);

  expect_error<ValueError>([&] { run_call(*p, params, {meta({2048, 4096}, DType::bfloat16), meta({4095}, DType::bfloat16)}); },
                           "RMSNormFwdOp: input 'weight' shape [4095] does not match [*normalized_shape] = [4096]");
  expect_error<ValueError>([&] { run_call(*p, params, {meta({2048, 4095}, DType::bfloat16), Tensor()}); },
                           "RMSNormFwdOp: input 'x' shape [2048, 4095] does not match [*B, *normalized_shape] = [2048, 4096]");
  expect_error<ValueError>([&] { run_call(*p, ParamMap{{"normalized_shape", std::vector<std::int64_t>{8, 512}}}, {meta({512}), Tensor()}); },
                           "RMSNormFwdOp: input 'x' shape [512] does not match [*B, *normalized_shape]: rank 1, but "
                           "[*B, *normalized_shape] needs at least 2 axes (normalized_shape = [8, 512])");
  expect_error<TypeError>([&] { run_call(*p, params, {meta({2, 4096}, DType::bfloat16), meta({4096}, DType::float16)}); },
                          "RMSNormFwdOp: input 'weight' dtype float16 does not match T = bfloat16 (solved from input 'x')");
  expect_error<TypeError>([&] { run_call(*p, params, {meta({2, 4096}, DType::int32), Tensor()}); },
                          "RMSNormFwdOp: input 'x' dtype int32 is not in T = DType[float16 | bfloat16 | float32]");
  expect_error<TypeError>([&] { run_call(*p, params, {Tensor(), Tensor()}); },
                          "RMSNormFwdOp: input 'x' is required but was not passed");
  expect_error<ValueError>([&] { p->check_construction({{"normalized_shape", std::vector<std::int64_t>{4096}}, {"eps", -1.0}}); },
                           "RMSNormFwdOp: eps must be positive (eps = -1)");
  expect_error<ValueError>([&] { p->check_construction({{"normalized_shape", std::vector<std::int64_t>{}}}); },
                           "RMSNormFwdOp: normalized_shape must name at least one axis (normalized_shape = [])");
  expect_error<ValueError>([&] { p->check_construction({{"normalized_shape", std::vector<std::int64_t>{-4}}}); },
                           "RMSNormFwdOp: parameter 'normalized_shape' = [-4] gives a tensor axis and must not be negative");
  expect_error<TypeError>([&] { p->check_construction({{"normalized_shape", std::int64_t{4096}}}); },
                          "RMSNormFwdOp: parameter 'normalized_shape' = 4096 (int) is not of type list[int]");
  expect_error<TypeError>([&] { p->check_construction({}); },
                          "RMSNormFwdOp: missing required parameter 'normalized_shape' (list[int])");
  expect_error<TypeError>([&] { p->check_construction({{"normalized_shape", std::vector<std::int64_t>{4}}, {"epsilon", 1e-6}}); },
                          "RMSNormFwdOp: unknown parameter 'epsilon'; the parameters are normalized_shape, eps");
}

TEST_CASE("RMSNormFwdOp: construction fills defaults in signature order and converts ints for floats") {
  const auto p = test::plan("RMSNormFwdOp");
  const ConstructionState st = p->check_construction({{"eps", std::int64_t{1}}, {"normalized_shape", std::vector<std::int64_t>{64}}});
  REQUIRE(st.params.size() == 2);
  CHECK(st.params.items()[0].first == "normalized_shape");
  CHECK(st.params.items()[1].first == "eps");
  CHECK(value_str(st.params.at("eps")) == "1");
  CHECK(value_kind(st.params.at("eps")) == "float");
  CHECK(p->param_names() == std::vector<std::string>{"normalized_shape", "eps"});
  CHECK(p->input_names() == std::vector<std::string>{"x", "weight"});
  CHECK(p->output_names() == std::vector<std::string>{"y"});
  CHECK(p->input_index("weight") == 1);
  CHECK(p->input_index("bias") == -1);
  CHECK(p->family() == "norm");
  CHECK(p->op_name() == "RMSNormFwdOp");
  CHECK(p->spec().status == "implemented");
  CHECK(p->has_call_time_tensor_input());
  CHECK_FALSE(p->has_composition());
  CHECK(p->compile_op_names() == std::vector<std::string>{"tileops::norm_rms_norm_fwd"});
}

TEST_CASE("GemmFwdOp: the Mat type family selects the axis order of each operand") {
  const auto p = test::plan("GemmFwdOp");
  const auto nt = run_call(*p, {}, {meta({2048, 4096}, DType::bfloat16), meta({1024, 4096}, DType::bfloat16)});
  CHECK(nt.record.branch_key == "trans_a=false,trans_b=true");
  CHECK(value_str(*nt.record.index("N")) == "1024");
  CHECK(shape_str(nt.check.outputs[0].shape) == "[2048, 1024]");
  const auto tn = run_call(*p, {{"trans_a", true}, {"trans_b", false}},
                           {meta({4096, 2048}, DType::float32), meta({4096, 512}, DType::float32)});
  CHECK(tn.record.branch_key == "trans_a=true,trans_b=false");
  CHECK(value_str(*tn.record.index("M")) == "2048");
  CHECK(value_str(*tn.record.index("K")) == "4096");
  CHECK(shape_str(tn.check.outputs[0].shape) == "[2048, 512]");

  expect_error<TypeError>([&] { run_call(*p, {}, {meta({128, 4096}, DType::bfloat16), meta({512, 4096}, DType::float16)}); },
                          "GemmFwdOp: input 'b' dtype float16 does not match T = bfloat16 (solved from input 'a')");
  expect_error<ValueError>([&] { run_call(*p, {}, {meta({128, 4096}, DType::bfloat16), meta({512, 4095}, DType::bfloat16)}); },
                           "GemmFwdOp: input 'b' shape [512, 4095] does not match Mat[trans_b, K, N] = [512, 4096] "
                           "(K = 4096 solved from input 'a')");
  expect_error<ValueError>([&] { run_call(*p, {}, {meta({128, 4096, 1}, DType::bfloat16), meta({512, 4096}, DType::bfloat16)}); },
                           "GemmFwdOp: input 'a' shape [128, 4096, 1] does not match Mat[trans_a, M, K]: rank 3, but [M, K] has 2 axes");
  expect_error<TypeError>([&] { p->check_construction({{"trans_a", std::int64_t{1}}}); },
                          "GemmFwdOp: parameter 'trans_a' = 1 (int) is not of type bool");
  expect_error<TypeError>([&] { run_call(*p, {}, {meta({4, 8}), meta({2, 8})}, meta({4, 2})); },
                          "GemmFwdOp: takes no 'out' buffer, but one was passed");
}

TEST_CASE("SiluAndMulFwdOp: [M, 2 * N] solves N and checks the axis is even") {
  const auto p = test::plan("SiluAndMulFwdOp");
  const auto ok = run_call(*p, {}, {meta({2048, 28672}, DType::bfloat16)});
  CHECK(value_str(*ok.record.index("N")) == "14336");
  CHECK(shape_str(ok.check.outputs[0].shape) == "[2048, 14336]");
  expect_error<ValueError>([&] { run_call(*p, {}, {meta({2048, 28671}, DType::bfloat16)}); },
                           "SiluAndMulFwdOp: input 'x' shape [2048, 28671] does not match [M, 2 * N] = [2048, 2 * N]: axis 1 is "
                           "28671, which 2 * N cannot equal for a whole N >= 0");
}

TEST_CASE("SoftmaxFwdOp: the dim refinement") {
  const auto p = test::plan("SoftmaxFwdOp");
  CHECK_NOTHROW(run_call(*p, {{"dim", std::int64_t{-2}}}, {meta({2, 3})}));
  expect_error<ValueError>([&] { run_call(*p, {{"dim", std::int64_t{3}}}, {meta({2, 3})}); },
                           "SoftmaxFwdOp: shape_rules[0] '-len(S) <= dim < len(S)' is false (dim = 3, S = [2, 3])");
}

TEST_CASE("AddFwdOp: broadcasting, the out buffer and the alpha refinements") {
  const auto p = test::plan("AddFwdOp");
  const auto ok = run_call(*p, {}, {meta({2048, 1}, DType::bfloat16), meta({4096}, DType::bfloat16)});
  CHECK(shape_str(ok.check.outputs[0].shape) == "[2048, 4096]");
  CHECK_FALSE(ok.check.outputs[0].is_out_buffer);
  const auto with_out = run_call(*p, {}, {meta({8, 4}, DType::float32), meta({4}, DType::float32)}, meta({8, 4}, DType::float32));
  CHECK(with_out.check.outputs[0].is_out_buffer);
  CHECK(with_out.record.has_out);
  CHECK(p->compile_op_names() == std::vector<std::string>{"tileops::elementwise_add_fwd", "tileops::elementwise_add_fwd_out"});
  CHECK(with_out.check.effect_branch == 1);

  expect_error<ValueError>([&] { run_call(*p, {}, {meta({2, 3}, DType::float32), meta({4}, DType::float32)}); },
                           "AddFwdOp: output 'output' shape [*broadcast(A, B)]: broadcast: shapes [2, 3] and [4] are not "
                           "broadcastable (axis -1: 3 vs 4) (A = [2, 3], B = [4])");
  expect_error<ValueError>([&] { run_call(*p, {}, {meta({8, 4}, DType::float32), meta({4}, DType::float32)}, meta({8, 5}, DType::float32)); },
                           "AddFwdOp: 'out' (the buffer of output 'output') shape [8, 5] does not match [*broadcast(A, B)] = [8, 4]");
  expect_error<ValueError>([&] { run_call(*p, {}, {meta({8, 4}, DType::float32), meta({4}, DType::float32)}, meta({8, 4}, DType::float16)); },
                           "AddFwdOp: 'out' (the buffer of output 'output') dtype float16 does not match T = float32");
  expect_error<ValueError>([&] { run_call(*p, {{"alpha", 0.5}}, {meta({4}, DType::int32), meta({4}, DType::int32)}); },
                           "AddFwdOp: shape_rules[0] 'category(alpha) == 'int' or category(alpha) == category(T)' is false "
                           "(alpha = 0.5, T = int32)");
  expect_error<ValueError>([&] { run_call(*p, {{"alpha", std::int64_t{100000}}}, {meta({4}, DType::float16), meta({4}, DType::float16)}); },
                           "AddFwdOp: shape_rules[1] 'representable(alpha, T)' is false (alpha = 100000, T = float16)");
  CHECK_NOTHROW(run_call(*p, {{"alpha", std::int64_t{2}}}, {meta({4}, DType::float16), meta({4}, DType::float16)}));
  expect_error<TypeError>([&] { p->check_construction({{"alpha", std::string("two")}}); },
                          "AddFwdOp: parameter 'alpha' = 'two' (str) is not of type int | float");
}

TEST_CASE("ReluFwdOp: inplace writes the input and aliases the output to it") {
  const auto p = test::plan("ReluFwdOp");
  const auto plain = run_call(*p, {}, {meta({4, 8})});
  CHECK_FALSE(plain.check.written[0]);
  CHECK(plain.check.outputs[0].alias_input == -1);
  CHECK(plain.record.written.empty());
  const auto inplace = run_call(*p, {{"inplace", true}}, {meta({4, 8})});
  CHECK(inplace.check.written[0]);
  CHECK(inplace.check.outputs[0].alias_input == 0);
  REQUIRE(inplace.record.written.size() == 1);
  CHECK(inplace.record.written[0] == "input");
  CHECK(p->compile_op_names() ==
        std::vector<std::string>{"tileops::elementwise_relu_fwd", "tileops::elementwise_relu_fwd_writes_input"});
  CHECK(inplace.check.effect_branch == 1);
}

TEST_CASE("GeluFwdOp: approximate is 'none' by default or 'tanh', and y has x's shape and dtype") {
  const auto p = test::plan("GeluFwdOp");
  CHECK(p->spec().status == "implemented");
  const ConstructionState defaults = p->check_construction({});
  CHECK(value_str(defaults.params.at("approximate")).find("none") != std::string::npos);
  const auto ok = run_call(*p, {{"approximate", std::string("tanh")}}, {meta({1024, 3072}, DType::float16)});
  REQUIRE(ok.check.outputs.size() == 1);
  CHECK(shape_str(ok.check.outputs[0].shape) == "[1024, 3072]");
  CHECK(ok.check.outputs[0].dtype == DType::float16);
  expect_error<ValueError>([&] { p->check_construction({{"approximate", std::string("exact")}}); },
                           "GeluFwdOp: approximate must be 'none' (erf) or 'tanh'");
  expect_error<TypeError>([&] { p->check_construction({{"approximate", true}}); }, "parameter 'approximate'");
  expect_error<TypeError>([&] { run_call(*p, {}, {meta({8}, DType::int32)}); },
                          "GeluFwdOp: input 'x' dtype int32 is not in T");
}

TEST_CASE("SumFwdOp and ProdFwdOp: reduced shapes, accumulate dtype and dim refinements") {
  for (const char* op : {"SumFwdOp", "ProdFwdOp"}) {
    CAPTURE(op);
    const auto p = test::plan(op);
    const auto all = run_call(*p, {}, {meta({2, 3, 4}, DType::int32)});
    CHECK(shape_str(all.check.outputs[0].shape) == "[]");
    CHECK(all.check.outputs[0].dtype == DType::int64);
    const auto keep = run_call(*p, {{"dim", std::vector<std::int64_t>{0, -1}}, {"keepdim", true}}, {meta({2, 3, 4}, DType::bfloat16)});
    CHECK(shape_str(keep.check.outputs[0].shape) == "[1, 3, 1]");
    CHECK(keep.check.outputs[0].dtype == DType::bfloat16);
    const auto acc = run_call(*p, {{"dim", std::int64_t{1}}, {"dtype", std::string("float32")}}, {meta({2, 3, 4}, DType::bfloat16)});
    CHECK(shape_str(acc.check.outputs[0].shape) == "[2, 4]");
    CHECK(acc.check.outputs[0].dtype == DType::float32);
    expect_error<ValueError>([&] { run_call(*p, {{"dim", std::int64_t{3}}}, {meta({2, 3, 4}, DType::float32)}); },
                             std::string(op) + ": shape_rules[0] 'valid_axes(dim, len(S))' is false (dim = 3, S = [2, 3, 4])");
    expect_error<ValueError>([&] { run_call(*p, {{"dim", std::vector<std::int64_t>{1, -2}}}, {meta({2, 3, 4}, DType::float32)}); },
                             std::string(op) + ": shape_rules[1] 'unique_axes(dim, len(S))' is false (dim = [1, -2], S = [2, 3, 4])");
    expect_error<TypeError>([&] { p->check_construction({{"dtype", std::string("int8")}}); },
                            std::string(op) + ": parameter 'dtype' = 'int8' (str) is not of type float16 | bfloat16 | float32 | "
                                              "float64 | int32 | int64 | None");
  }
}

TEST_CASE("AlibiFwdOp: no tensor input, the device parameter decides the call device") {
  const auto p = test::plan("AlibiFwdOp");
  CHECK_FALSE(p->has_call_time_tensor_input());
  CHECK(p->compile_op_names().empty());
  const auto on_cpu = run_call(*p, {{"seq_len", std::int64_t{16}}, {"num_heads", std::int64_t{4}}, {"device", std::string("cpu")}}, {});
  CHECK(on_cpu.check.device == Device::cpu());
  CHECK(shape_str(on_cpu.check.outputs[0].shape) == "[4, 16, 16]");
  CHECK(on_cpu.check.outputs[0].dtype == DType::float32);
  const auto bf16 = run_call(*p, {{"seq_len", std::int64_t{2}}, {"num_heads", std::int64_t{1}}, {"out_dtype", DType::bfloat16}}, {});
  CHECK(bf16.check.outputs[0].dtype == DType::bfloat16);
  CHECK_FALSE(bf16.check.device.has_value());
  expect_error<ValueError>([&] { p->check_construction({{"seq_len", std::int64_t{0}}, {"num_heads", std::int64_t{4}}}); },
                           "AlibiFwdOp: shape_rules[0] 'seq_len > 0' is false (seq_len = 0)");
  expect_error<TypeError>([&] { p->check_construction({{"seq_len", std::int64_t{8}}, {"num_heads", std::int64_t{4}}, {"out_dtype", DType::int32}}); },
                          "AlibiFwdOp: parameter 'out_dtype' = int32 (dtype) is not of type float16 | bfloat16 | float32");
  expect_error<TypeError>([&] { p->check_construction({{"seq_len", std::int64_t{8}}, {"num_heads", std::int64_t{4}}, {"device", std::int64_t{0}}}); },
                          "AlibiFwdOp: parameter 'device' = 0 (int) is not of type device | None");
  expect_error<TypeError>([&] { p->check_construction({{"seq_len", std::int64_t{8}}, {"num_heads", std::int64_t{4}}, {"device", std::string("cuda:x")}}); },
                          "AlibiFwdOp: parameter 'device' = 'cuda:x' (str) is not of type device | None");
}

TEST_CASE("BatchNormFwdOp: training writes the running statistics and returns mean and rstd") {
  const auto p = test::plan("BatchNormFwdOp");
  const auto x = meta({8, 64, 4, 4}, DType::float16);
  const auto stat = [] { return meta({64}, DType::float32); };
  const auto eval = run_call(*p, {}, {x, stat(), stat(), Tensor(), Tensor()});
  CHECK_FALSE(eval.check.outputs[1].present);
  CHECK_FALSE(eval.check.outputs[2].present);
  CHECK_FALSE(eval.check.written[1]);
  const auto train = run_call(*p, {{"training", true}}, {x, stat(), stat(), stat(), stat()});
  CHECK(train.check.outputs[1].present);
  CHECK(shape_str(train.check.outputs[1].shape) == "[64]");
  CHECK(train.check.written[1]);
  CHECK(train.check.written[2]);
  CHECK(p->compile_op_names() ==
        std::vector<std::string>{"tileops::norm_batch_norm_fwd_without_mean_without_rstd",
                                 "tileops::norm_batch_norm_fwd_writes_running_mean_writes_running_var"});
  CHECK(eval.check.effect_branch == 0);
  CHECK(train.check.effect_branch == 1);
  expect_error<TypeError>([&] { run_call(*p, {}, {x, meta({64}, DType::float16), stat(), Tensor(), Tensor()}); },
                          "BatchNormFwdOp: input 'running_mean' dtype float16 does not match float32");
  expect_error<ValueError>([&] { run_call(*p, {}, {x, meta({32}, DType::float32), stat(), Tensor(), Tensor()}); },
                           "BatchNormFwdOp: input 'running_mean' shape [32] does not match [C] = [64] (C = 64 solved from input 'x')");
  expect_error<ValueError>([&] { run_call(*p, {{"training", true}}, {meta({1, 64}, DType::float16), stat(), stat(), Tensor(), Tensor()}); },
                           "BatchNormFwdOp: shape_rules[0] 'not training or N * prod(S) > 1' is false (training = true, N = 1, S = [])");
}

TEST_CASE("LayerNormFwdOp: independent optional weight and bias") {
  const auto p = test::plan("LayerNormFwdOp");
  const ParamMap params{{"normalized_shape", std::vector<std::int64_t>{64}}};
  CHECK_NOTHROW(run_call(*p, params, {meta({4, 64}), Tensor(), meta({64})}));
  const auto both = run_call(*p, params, {meta({4, 64}), meta({64}), meta({64})});
  CHECK(both.record.tensors.size() == 4);
  expect_error<ValueError>([&] { run_call(*p, params, {meta({4, 64}), Tensor(), meta({32})}); },
                           "LayerNormFwdOp: input 'bias' shape [32] does not match [*normalized_shape] = [64]");
}

TEST_CASE("SwiGLUMLPFwdOp: a composite without compile boundary") {
  const auto p = test::plan("SwiGLUMLPFwdOp");
  CHECK(p->has_composition());
  CHECK(p->composition_stages() == std::vector<std::string>{"gate_up", "act", "down"});
  CHECK(p->compile_op_names().empty());
  const auto ok = run_call(*p, {}, {meta({16, 64}), meta({256, 64}), meta({64, 128})});
  CHECK(value_str(*ok.record.index("I")) == "128");
  CHECK(shape_str(ok.check.outputs[0].shape) == "[16, 64]");
  expect_error<ValueError>([&] { run_call(*p, {}, {meta({16, 64}), meta({256, 64}), meta({64, 127})}); },
                           "SwiGLUMLPFwdOp: input 'w_down' shape [64, 127] does not match [H, I] = [64, 128] "
                           "(I = 128 solved from input 'w_gate_up')");
}

TEST_CASE("for_op rejects an unknown op naming the known ones") {
  expect_error<ValueError>([] { SignaturePlan::for_op("NoSuchFwdOp"); },
                           "no manifest entry is named 'NoSuchFwdOp'; the known ops are AddFwdOp, AlibiFwdOp");
  CHECK(SignaturePlan::for_op("GemmFwdOp") == SignaturePlan::for_op("GemmFwdOp"));
}
