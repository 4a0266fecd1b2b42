// The cost of the cached call path: op(x, w) on an RMSNormFwdOp whose kernel does no work
// (it returns a preallocated output), against calling that kernel directly. The difference is
// the base class's overhead per call: signature check, kernel lookup, result check, record.
// And whether threads sharing one instance pay for it: AddFwdOp with `out` on 64 floats, two
// threads calling one shared instance against two threads with an instance each (compare the
// items_per_second of the two).
#include <benchmark/benchmark.h>

#include <algorithm>

#include "tileops/extend/backend.hpp"
#include "tileops/extend/ops/norm.hpp"
#include "tileops/extend/plugin.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/rms_norm.hpp"

namespace {

using namespace tileops;

// Returns the same preallocated output for every call: the cheapest kernel that still
// satisfies the signature (a new tensor shaped like x, sharing no storage with the inputs).
// The output is per thread, so threads calling one shared kernel share no reference count.
// With the cpu plugin loaded it must outrank the plugin's kernel, which also applies.
template <bool kOverCpuPlugin>
class TrivialRMSNorm final : public ops::RMSNormFwdOp::RmsNorm::Impl<> {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  static constexpr KeyList preferred_over = kOverCpuPlugin ? KeyList{"cpu_rms_norm"} : KeyList{};
  using ops::RMSNormFwdOp::RmsNorm::Impl<>::Impl;
  Tensor forward(const Tensor& x, const Tensor&) override {
    thread_local Tensor out;
    if (!out.defined() || out.shape() != x.shape() || out.dtype() != x.dtype()) out = Tensor::empty(x.shape(), x.dtype());
    return out;
  }
};

// One thread's arguments: threads share the op instance, not their tensors.
struct Inputs {
  Tensor x = Tensor::zeros({2048, 4096}, DType::bfloat16);
  Tensor w = Tensor::zeros({4096}, DType::bfloat16);
};

struct Fixture {
  Registrar registrar{"bench"};
  std::unique_ptr<RMSNormFwdOp> op;
  Fixture() {
    const std::vector<PluginInfo> plugins = loaded_plugins();
    if (std::any_of(plugins.begin(), plugins.end(), [](const PluginInfo& p) { return p.name == "cpu"; })) {
      registrar.register_kernel_type<TrivialRMSNorm<true>>("RMSNormFwdOp", "bench_trivial");
    } else {
      registrar.register_kernel_type<TrivialRMSNorm<false>>("RMSNormFwdOp", "bench_trivial");
    }
    op = std::make_unique<RMSNormFwdOp>(std::vector<std::int64_t>{4096}, 1e-6);
    Inputs in;
    (*op)(in.x, in.w);  // select the target and build the entry
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void BM_RMSNormOpCall(benchmark::State& state) {
  Fixture& f = fixture();
  thread_local Inputs in;
  for (auto _ : state) benchmark::DoNotOptimize((*f.op)(in.x, in.w));
}
BENCHMARK(BM_RMSNormOpCall)->ThreadRange(1, 8)->UseRealTime();

void BM_RMSNormKernelDirect(benchmark::State& state) {
  Inputs in;
  ops::RMSNormFwdOp::RmsNorm::Call call;
  TrivialRMSNorm<false> kernel(call);
  for (auto _ : state) benchmark::DoNotOptimize(kernel.forward(in.x, in.w));
}
BENCHMARK(BM_RMSNormKernelDirect);

// One thread's add arguments.
struct AddInputs {
  Tensor a = Tensor::zeros({1, 64}, DType::float32);
  Tensor b = Tensor::zeros({1, 64}, DType::float32);
  Tensor out = Tensor::zeros({1, 64}, DType::float32);
};

void add_calls(benchmark::State& state, AddFwdOp& add) {
  thread_local AddInputs in;
  add(in.a, in.b, in.out);
  for (auto _ : state) benchmark::DoNotOptimize(add(in.a, in.b, in.out));
  state.SetItemsProcessed(state.iterations());
}

void BM_AddSharedInstance(benchmark::State& state) {
  static AddFwdOp shared;
  add_calls(state, shared);
}
BENCHMARK(BM_AddSharedInstance)->Threads(2)->UseRealTime();

void BM_AddOwnInstances(benchmark::State& state) {
  thread_local AddFwdOp own;
  add_calls(state, own);
}
BENCHMARK(BM_AddOwnInstances)->Threads(2)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
