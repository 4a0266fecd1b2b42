// The call check on in-test manifests: each unification form, type family
// tuple matches and domain restrictions, optional expressions, let entries, dtype_combos,
// construction-time tensors, Maybe and enum parameters. Each rule has a passing and a failing
// call.
#include <doctest/doctest.h>

#include "signature/plan_support.hpp"

using namespace tileops;
using test::expect_error;
using test::meta;
using test::run_call;

namespace {

std::shared_ptr<const SignaturePlan> compile(const char* yaml, const char* op) { return SignaturePlan::from_yaml(yaml, op); }

}  // namespace

TEST_CASE("a*M+e solves M when it is the only unknown, other forms only check, in any declaration order") {
  const char* yaml = R"yaml(
VarlenPackFwdOp:
  family: test
  status: spec-only
  signature:
    forall: {B: Dim, N: Dim, K: Dim, M: Dim, T: "DType[float16 | bfloat16]"}
    inputs:
      packed: {dtype: uint8, shape: "[N, K // 2]"}
      activation: {dtype: T, shape: "[M, K]"}
      cu_seqlens: {dtype: int32, shape: "[B + 1]"}
    outputs:
      y: {dtype: T, shape: "[M, N]"}
  workloads:
  - {B: 4, N: 256, K: 128, M: 16, dtype_cases: [{T: float16}], label: unit}
  roofline:
    flops: "2 * M * N * K"
)yaml";
  const auto p = compile(yaml, "VarlenPackFwdOp");
  const auto ok = run_call(*p, {}, {meta({256, 64}, DType::uint8), meta({16, 128}), meta({5}, DType::int32)});
  CHECK(value_str(*ok.record.index("B")) == "4");
  CHECK(value_str(*ok.record.index("K")) == "128");
  CHECK(shape_str(ok.check.outputs[0].shape) == "[16, 256]");
  expect_error<ValueError>([&] { run_call(*p, {}, {meta({256, 63}, DType::uint8), meta({16, 128}), meta({5}, DType::int32)}); },
                           "VarlenPackFwdOp: input 'packed' shape [256, 63] does not match [N, K // 2] = [256, 64] "
                           "(K = 128 solved from input 'activation')");
  expect_error<ValueError>([&] { run_call(*p, {}, {meta({256, 64}, DType::uint8), meta({16, 128}), meta({0}, DType::int32)}); },
                           "VarlenPackFwdOp: input 'cu_seqlens' shape [0] does not match [B + 1] = [B + 1]: axis 0 is 0, which "
                           "B + 1 cannot equal for a whole B >= 0");
  expect_error<TypeError>([&] { run_call(*p, {}, {meta({256, 64}, DType::int8), meta({16, 128}), meta({5}, DType::int32)}); },
                          "VarlenPackFwdOp: input 'packed' dtype int8 does not match uint8");
}

TEST_CASE("*S solves a Shape index between fixed axes, a solved index is checked where it recurs") {
  const auto p = compile(R"yaml(
ChannelsFwdOp:
  family: test
  status: spec-only
  signature:
    forall: {N: Dim, C: Dim, S: Shape, T: "DType[float32]"}
    inputs:
      x: {dtype: T, shape: "[N, *S, C]"}
      mask: {dtype: bool, shape: "[*S]"}
    outputs:
      y: {dtype: T, shape: "[N, C, *S]"}
  workloads:
  - {N: 2, C: 3, S: [4, 5], dtype_cases: [{T: float32}], label: unit}
  roofline:
    flops: "N * C * prod(S)"
)yaml",
                         "ChannelsFwdOp");
  const auto ok = run_call(*p, {}, {meta({2, 4, 5, 3}, DType::float32), meta({4, 5}, DType::bool_)});
  CHECK(value_str(*ok.record.index("S")) == "[4, 5]");
  CHECK(shape_str(ok.check.outputs[0].shape) == "[2, 3, 4, 5]");
  const auto scalar = run_call(*p, {}, {meta({2, 3}, DType::float32), meta({}, DType::bool_)});
  CHECK(value_str(*scalar.record.index("S")) == "[]");
  expect_error<ValueError>([&] { run_call(*p, {}, {meta({2, 4, 5, 3}, DType::float32), meta({4, 6}, DType::bool_)}); },
                           "ChannelsFwdOp: input 'mask' shape [4, 6] does not match [*S] = [4, 5] (S = [4, 5] solved from input 'x')");
  expect_error<ValueError>([&] { run_call(*p, {}, {meta({2}, DType::float32), meta({}, DType::bool_)}); },
                           "ChannelsFwdOp: input 'x' shape [2] does not match [N, *S, C]: rank 1, but [N, *S, C] needs at least 2 axes");
}

TEST_CASE("type family tuple matches, with a domain restriction excluding the uncovered case") {
  const auto p = compile(R"yaml(
ClampFwdOp:
  family: test
  status: spec-only
  signature:
    types:
      ClampOut:
        params: {A: Shape, L: Shape, U: Shape, pl: Bool, pu: Bool}
        match: [pl, pu]
        cases:
        - {when: [true, true], is: "[*broadcast(A, L, U)]"}
        - {when: [true, false], is: "[*broadcast(A, L)]"}
        - {when: [false, true], is: "[*broadcast(A, U)]"}
    forall: {A: Shape, L: Shape, U: Shape, T: "DType[float32]"}
    inputs:
      x: {dtype: T, shape: "[*A]"}
      lo: {dtype: T, shape: "[*L]", optional: true}
      hi: {dtype: T, shape: "[*U]", optional: true}
    outputs:
      y: {dtype: T, shape: "ClampOut[A, L, U, present(lo), present(hi)]"}
    shape_rules:
    - "present(lo) or present(hi)"
  workloads:
  - {A: [4, 1], L: [3], some: [lo], dtype_cases: [{T: float32}], label: lo}
  - {A: [4, 1], U: [3], some: [hi], dtype_cases: [{T: float32}], label: hi}
  roofline:
    flops: "prod(A)"
)yaml",
                         "ClampFwdOp");
  const auto x = meta({4, 1}, DType::float32);
  const auto lo = run_call(*p, {}, {x, meta({3}, DType::float32), Tensor()});
  CHECK(lo.record.branch_key == "present(lo)=true,present(hi)=false");
  CHECK(shape_str(lo.check.outputs[0].shape) == "[4, 3]");
  const auto both = run_call(*p, {}, {x, meta({3}, DType::float32), meta({2, 1, 1}, DType::float32)});
  CHECK(shape_str(both.check.outputs[0].shape) == "[2, 4, 3]");
  expect_error<ValueError>([&] { run_call(*p, {}, {x, Tensor(), Tensor()}); },
                           "ClampFwdOp: shape_rules[0] 'present(lo) or present(hi)' is false (present(lo) = false, present(hi) = false)");
}

TEST_CASE("optional expressions tie tensors together, let entries, Maybe and enum parameters") {
  const auto p = compile(R"yaml(
SharedExpertFwdOp:
  family: test
  status: spec-only
  signature:
    forall: {M: Dim, H: Dim, S: Dim, T: "DType[bfloat16]"}
    params:
      act: {type: "'silu' | 'gelu'", default: silu}
      topk: {type: "int | None", default: null}
    inputs:
      x: {dtype: T, shape: "[M, H]"}
      w_up: {dtype: T, shape: "[2 * S, H]", optional: true}
      w_down: {dtype: T, shape: "[H, S]", optional: "present(w_up)"}
    let:
      chunks: "ceil_div(M, topk.value) if present(topk) else 1"
    outputs:
      y: {dtype: T, shape: "[M, H]"}
      routed: {dtype: T, shape: "[chunks, H]", nullable: "present(w_up)"}
    shape_rules:
    - "act == 'silu' or H % 2 == 0"
    - "not present(topk) or topk.value > 0"
  workloads:
  - {M: 8, H: 16, dtype_cases: [{T: bfloat16}], label: plain}
  - {M: 8, H: 16, S: 4, some: [w_up], topk: 3, dtype_cases: [{T: bfloat16}], label: shared}
  roofline:
    flops: "M * H"
)yaml",
                         "SharedExpertFwdOp");
  const auto x = meta({8, 16}, DType::bfloat16);
  const auto plain = run_call(*p, {}, {x, Tensor(), Tensor()});
  CHECK_FALSE(plain.check.outputs[1].present);
  const auto shared = run_call(*p, {{"topk", std::int64_t{3}}}, {x, meta({8, 16}, DType::bfloat16), meta({16, 4}, DType::bfloat16)});
  REQUIRE(shared.check.outputs[1].present);
  CHECK(shape_str(shared.check.outputs[1].shape) == "[3, 16]");
  CHECK(value_str(*shared.record.index("chunks")) == "3");
  expect_error<TypeError>([&] { run_call(*p, {}, {x, Tensor(), meta({16, 4}, DType::bfloat16)}); },
                          "SharedExpertFwdOp: input 'w_down' must not be passed when 'present(w_up)' is false (present(w_up) = false)");
  expect_error<TypeError>([&] { run_call(*p, {}, {x, meta({8, 16}, DType::bfloat16), Tensor()}); },
                          "SharedExpertFwdOp: input 'w_down' must be passed when 'present(w_up)' is true (present(w_up) = true)");
  expect_error<ValueError>([&] { run_call(*p, {{"act", std::string("gelu")}}, {meta({8, 15}, DType::bfloat16), Tensor(), Tensor()}); },
                           "SharedExpertFwdOp: shape_rules[0] 'act == 'silu' or H % 2 == 0' is false (act = 'gelu', H = 15)");
  expect_error<TypeError>([&] { p->check_construction({{"act", std::string("relu")}}); },
                          "SharedExpertFwdOp: parameter 'act' = 'relu' (str) is not of type 'silu' | 'gelu'");
  expect_error<ValueError>([&] { p->check_construction({{"topk", std::int64_t{0}}}); },
                           "SharedExpertFwdOp: shape_rules[1] 'not present(topk) or topk.value > 0' is false (topk = 0)");
}

TEST_CASE("dtype_combos restrict combinations of DType indices and dtype parameters") {
  const auto p = compile(R"yaml(
MixedGemmFwdOp:
  family: test
  status: spec-only
  signature:
    forall: {M: Dim, K: Dim, N: Dim, T: "DType[float16 | bfloat16]", W: "DType[float16 | bfloat16 | int8]"}
    inputs:
      a: {dtype: T, shape: "[M, K]"}
      b: {dtype: W, shape: "[K, N]"}
    outputs:
      d: {dtype: T, shape: "[M, N]"}
    dtype_combos:
    - {T: float16, W: float16}
    - {T: bfloat16, W: bfloat16}
    - {T: bfloat16, W: int8}
  workloads:
  - {M: 4, K: 8, N: 2, dtype_cases: [{T: bfloat16, W: int8}], label: unit}
  roofline:
    flops: "2 * M * N * K"
)yaml",
                         "MixedGemmFwdOp");
  CHECK_NOTHROW(run_call(*p, {}, {meta({4, 8}, DType::bfloat16), meta({8, 2}, DType::int8)}));
  expect_error<TypeError>([&] { run_call(*p, {}, {meta({4, 8}, DType::float16), meta({8, 2}, DType::int8)}); },
                          "MixedGemmFwdOp: dtypes (T = float16, W = int8) are not one of the signature's dtype_combos");
}

TEST_CASE("construction-time tensors solve indices at construction, device: cpu and contiguous inputs") {
  const auto p = compile(R"yaml(
LookupFwdOp:
  family: test
  status: spec-only
  signature:
    forall: {B: Dim, H: Dim, R: "DType[float32]", T: "DType[float16 | float32]"}
    params:
      table: {dtype: R, shape: "[H]"}
    inputs:
      x: {dtype: T, shape: "[B, H]", contiguous: true}
      lengths: {dtype: int64, shape: "[B]", device: cpu}
    outputs:
      y: {dtype: T, shape: "[B, H]"}
  workloads:
  - {B: 2, H: 8, dtype_cases: [{R: float32, T: float16}], label: unit}
  roofline:
    flops: "B * H"
)yaml",
                         "LookupFwdOp");
  const Tensor table = test::host({8}, DType::float32);
  const ConstructionState st = p->check_construction({{"table", table}});
  REQUIRE(st.indices.size() == 2);
  CHECK(st.indices[0].name == "H");
  CHECK(value_str(st.indices[0].value) == "8");
  CHECK(st.indices[1].name == "R");
  CHECK(value_str(st.indices[1].value) == "float32");
  CallCheck check;
  SignatureCall record;
  std::vector<Tensor> ok{test::host({2, 8}), test::host({2}, DType::int64)};
  p->check_call(st, CallArgs{ok, Tensor()}, check, record);
  CHECK(check.device == Device::cpu());
  CHECK(check.contiguous[0]);
  CHECK(record.tensor("table") != nullptr);
  std::vector<Tensor> wrong{test::host({2, 7}), test::host({2}, DType::int64)};
  expect_error<ValueError>([&] { p->check_call(st, CallArgs{wrong, Tensor()}, check, record); },
                           "LookupFwdOp: input 'x' shape [2, 7] does not match [B, H] = [2, 8] (H = 8 solved from parameter 'table')");
  std::vector<Tensor> strided{test::host({8, 2}).transpose(0, 1), test::host({2}, DType::int64)};
  expect_error<ValueError>([&] { p->check_call(st, CallArgs{strided, Tensor()}, check, record); },
                           "LookupFwdOp: input 'x' must be contiguous (declared contiguous: true), but has strides [1, 2] for shape [2, 8]");
  expect_error<TypeError>([&] { p->check_construction({}); }, "LookupFwdOp: parameter 'table' (a tensor) is required but was not given");
  expect_error<TypeError>([&] { p->check_construction({{"table", std::int64_t{3}}}); },
                          "LookupFwdOp: parameter 'table' must be a tensor, got int 3");
  expect_error<TypeError>([&] { p->check_construction({{"table", test::host({8}, DType::float16)}}); },
                          "LookupFwdOp: parameter 'table' dtype float16 is not in R = DType[float32]");
}

TEST_CASE("an output axis that evaluates negative is a ValueError naming the values") {
  const auto p = compile(R"yaml(
TrimFwdOp:
  family: test
  status: spec-only
  signature:
    forall: {M: Dim, T: "DType[float32]"}
    params:
      k: {type: int}
    inputs:
      x: {dtype: T, shape: "[M]"}
    outputs:
      y: {dtype: T, shape: "[M - k]"}
  workloads:
  - {M: 8, k: 2, dtype_cases: [{T: float32}], label: unit}
  roofline:
    flops: "M"
)yaml",
                         "TrimFwdOp");
  CHECK(shape_str(run_call(*p, {{"k", std::int64_t{3}}}, {meta({8}, DType::float32)}).check.outputs[0].shape) == "[5]");
  expect_error<ValueError>([&] { run_call(*p, {{"k", std::int64_t{9}}}, {meta({8}, DType::float32)}); },
                           "TrimFwdOp: output 'y' shape [M - k] = [-1] has a negative axis (k = 9, M = 8)");
  expect_error<TypeError>([&] {
    const auto st = p->check_construction({{"k", std::int64_t{1}}});
    CallCheck c;
    SignatureCall r;
    std::vector<Tensor> two{meta({8}), meta({8})};
    p->check_call(st, CallArgs{two, Tensor()}, c, r);
  }, "TrimFwdOp: takes 1 input tensor slot(s), got 2");
}

TEST_CASE("a shape rule with a manifest message shows the message and the values seen, not the expression") {
  const auto p = compile(R"yaml(
ScaleFwdOp:
  family: test
  status: spec-only
  signature:
    forall: {M: Dim, T: "DType[float32]"}
    params:
      scale: {type: float, default: 1.0}
    inputs:
      x: {dtype: T, shape: "[M]"}
    outputs:
      y: {dtype: T, shape: "[M]"}
    shape_rules:
    - {rule: "scale > 0", message: "scale must be positive"}
    - "M % 2 == 0"
  workloads:
  - {M: 4, dtype_cases: [{T: float32}], label: even}
  roofline:
    flops: "M"
)yaml",
                         "ScaleFwdOp");
  expect_error<ValueError>([&] { p->check_construction({{"scale", -2.0}}); }, "ScaleFwdOp: scale must be positive (scale = -2)");
  expect_error<ValueError>([&] { run_call(*p, {{"scale", 1.0}}, {meta({3}, DType::float32)}); },
                           "ScaleFwdOp: shape_rules[1] 'M % 2 == 0' is false (M = 3)");
}
