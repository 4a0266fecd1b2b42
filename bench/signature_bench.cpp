// The cost of one signature check (SignaturePlan::check_call) as the op base pays it on every
// call: a fresh CallCheck and SignatureCall record each iteration.
#include <benchmark/benchmark.h>

#include <vector>

#include "signature/signature_plan.hpp"

namespace {

using namespace tileops;

void check_call_loop(benchmark::State& state, const char* op, const ParamMap& params, std::vector<Tensor> inputs) {
  const auto plan = SignaturePlan::for_op(op);
  const ConstructionState construction = plan->check_construction(params);
  const CallArgs args{inputs, Tensor()};
  for (auto _ : state) {
    CallCheck check;
    SignatureCall record;
    plan->check_call(construction, args, check, record);
    benchmark::DoNotOptimize(record);
    benchmark::DoNotOptimize(check);
  }
}

// RMSNormFwdOp, Llama-3.1 8B prefill: x [2048, 4096] bf16 with its weight.
void BM_CheckCall_RMSNorm(benchmark::State& state) {
  check_call_loop(state, "RMSNormFwdOp", {{"normalized_shape", std::vector<std::int64_t>{4096}}},
                  {Tensor::empty({2048, 4096}, DType::bfloat16), Tensor::empty({4096}, DType::bfloat16)});
}

// GemmFwdOp, trans_b (the default): a [2048, 4096], b [4096, 4096] holding B transposed.
void BM_CheckCall_Gemm(benchmark::State& state) {
  check_call_loop(state, "GemmFwdOp", {}, {Tensor::empty({2048, 4096}, DType::bfloat16), Tensor::empty({4096, 4096}, DType::bfloat16)});
}

// The construction check, which runs once per op instance.
void BM_CheckConstruction_RMSNorm(benchmark::State& state) {
  const auto plan = SignaturePlan::for_op("RMSNormFwdOp");
  const ParamMap params{{"normalized_shape", std::vector<std::int64_t>{4096}}, {"eps", 1e-5}};
  for (auto _ : state) benchmark::DoNotOptimize(plan->check_construction(params));
}

}  // namespace

BENCHMARK(BM_CheckCall_RMSNorm);
BENCHMARK(BM_CheckCall_Gemm);
BENCHMARK(BM_CheckConstruction_RMSNorm);

BENCHMARK_MAIN();
