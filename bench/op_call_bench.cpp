// The cost of the cached call path: op(x, w) on an RMSNormFwdOp whose kernel does no work
// (it returns a preallocated output), against calling that kernel directly. The difference is
// the base class's overhead per call: signature check, kernel lookup, result check, record.
#include <benchmark/benchmark.h>

#include "tileops/backend.hpp"
#include "tileops/ops/rms_norm.hpp"

namespace {

using namespace tileops;

// Returns the same preallocated output for every call: the cheapest kernel that still
// satisfies the signature (a new tensor shaped like x, sharing no storage with the inputs).
class TrivialRMSNorm final : public Kernel, public RMSNormFwdInterface {
 public:
  static constexpr DeviceTypes devices{"cpu"};
  explicit TrivialRMSNorm(const LayerNormCall&) {}
  Tensor forward(const Tensor& x, const Tensor&) override {
    if (!out_.defined() || out_.shape() != x.shape() || out_.dtype() != x.dtype()) out_ = Tensor::empty(x.shape(), x.dtype());
    return out_;
  }

 private:
  Tensor out_;
};

struct Fixture {
  Registrar registrar{"bench"};
  Tensor x = Tensor::zeros({2048, 4096}, DType::bfloat16);
  Tensor w = Tensor::zeros({4096}, DType::bfloat16);
  std::unique_ptr<RMSNormFwdOp> op;
  Fixture() {
    registrar.register_kernel_type<TrivialRMSNorm>("RMSNormFwdOp", "bench_trivial");
    op = std::make_unique<RMSNormFwdOp>(std::vector<std::int64_t>{4096}, 1e-6);
    (*op)(x, w);  // select the target and build the entry
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void BM_RMSNormOpCall(benchmark::State& state) {
  Fixture& f = fixture();
  for (auto _ : state) benchmark::DoNotOptimize((*f.op)(f.x, f.w));
}
BENCHMARK(BM_RMSNormOpCall)->ThreadRange(1, 8)->UseRealTime();

void BM_RMSNormKernelDirect(benchmark::State& state) {
  Fixture& f = fixture();
  LayerNormCall call;
  TrivialRMSNorm kernel(call);
  for (auto _ : state) benchmark::DoNotOptimize(kernel.forward(f.x, f.w));
}
BENCHMARK(BM_RMSNormKernelDirect);

}  // namespace

BENCHMARK_MAIN();
