// Times the cuda plugin's kernels through op(...) on one GPU and prints one JSON object per
// line: the device-to-device copy bandwidth of this run, then each (op, shape, dtype) with its
// median time per call, the bytes its manifest roofline counts and the rate of a copy moving as
// many bytes, timed the same way, then the host time of one
// cached call of a tiny op. bench/gpu/compare_torch.py runs it beside PyTorch's kernels on
// the same shapes and prints the table.
//
// Method (bench_timing.hpp): CUDA events around batches of calls on the default stream, after a
// warm-up; the median over repetitions; inputs rotated among enough copies that a batch reads more than
// twice the L2 cache (at most 64 copies), so that sizes that fit in it are not timed from it.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bench_timing.hpp"
#include "tileops/extend/plugin.hpp"
#include "tileops/ops/batch_norm.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/embedding.hpp"
#include "tileops/ops/fused_add_rms_norm.hpp"
#include "tileops/ops/layer_norm.hpp"
#include "tileops/ops/reduction.hpp"
#include "tileops/ops/rms_norm.hpp"
#include "tileops/ops/softmax.hpp"
#include "tileops/testing.hpp"

double empty_launch_us(int launches);

namespace {

using namespace tileops;
const Device kGpu = Device::parse("cuda:0");

using bench::check;
using bench::median;
using bench::time_calls;

Tensor random_gpu(const Shape& shape, DType dtype, unsigned seed) {
  return testing::random_tensors({TensorSpec{Device::cpu(), dtype, shape}}, Device::cpu(), seed).front().to(kGpu);
}

struct Case {
  std::string op;
  Shape shape;
  DType dtype;
  std::function<std::unique_ptr<Op>()> make;
  // The inputs of one copy, given the case's shape and dtype.
  std::function<std::vector<Tensor>(const Shape&, DType, unsigned)> inputs;
};

std::vector<Tensor> x_only(const Shape& s, DType d, unsigned seed) { return {random_gpu(s, d, seed)}; }

std::vector<Case> cases() {
  std::vector<Case> out;
  for (std::int64_t rows : {16384, 2048, 4}) {
    const Shape shape{rows, 4096};
    for (DType dt : {DType::float32, DType::float16, DType::bfloat16}) {
      const auto add = [&](std::string op, std::function<std::unique_ptr<Op>()> make,
                           std::function<std::vector<Tensor>(const Shape&, DType, unsigned)> inputs) {
        out.push_back({std::move(op), shape, dt, std::move(make), std::move(inputs)});
      };
      add(
          "rms_norm", [] { return std::make_unique<RMSNormFwdOp>(std::vector<std::int64_t>{4096}, 1e-5); },
          [](const Shape& s, DType d, unsigned seed) {
            return std::vector<Tensor>{random_gpu(s, d, seed), random_gpu({4096}, d, seed + 1)};
          });
      add(
          "layer_norm", [] { return std::make_unique<LayerNormFwdOp>(std::vector<std::int64_t>{4096}, 1e-5); },
          [](const Shape& s, DType d, unsigned seed) {
            return std::vector<Tensor>{random_gpu(s, d, seed), random_gpu({4096}, d, seed + 1),
                                       random_gpu({4096}, d, seed + 2)};
          });
      add(
          "softmax", [] { return std::make_unique<SoftmaxFwdOp>(-1); }, x_only);
      add(
          "silu_and_mul", [] { return std::make_unique<SiluAndMulFwdOp>(); }, x_only);
      add(
          "add", [] { return std::make_unique<AddFwdOp>(); },
          [](const Shape& s, DType d, unsigned seed) {
            return std::vector<Tensor>{random_gpu(s, d, seed), random_gpu(s, d, seed + 1)};
          });
      add(
          "add_row", [] { return std::make_unique<AddFwdOp>(); },
          [](const Shape& s, DType d, unsigned seed) {
            return std::vector<Tensor>{random_gpu(s, d, seed), random_gpu({4096}, d, seed + 1)};
          });
      add(
          "relu", [] { return std::make_unique<ReluFwdOp>(); }, x_only);
      add(
          "gelu_erf", [] { return std::make_unique<GeluFwdOp>("none"); }, x_only);
      add(
          "gelu_tanh", [] { return std::make_unique<GeluFwdOp>("tanh"); }, x_only);
      add(
          "fused_add_rms_norm", [] { return std::make_unique<FusedAddRMSNormFwdOp>(std::vector<std::int64_t>{4096}, 1e-5); },
          [](const Shape& s, DType d, unsigned seed) {
            return std::vector<Tensor>{random_gpu(s, d, seed), random_gpu(s, d, seed + 1),
                                       random_gpu({4096}, d, seed + 2)};
          });
      add(
          "gelu_and_mul", [] { return std::make_unique<GeluAndMulFwdOp>("tanh"); }, x_only);
      add(
          "embedding", [] { return std::make_unique<EmbeddingFwdOp>(); },
          [](const Shape& s, DType d, unsigned seed) {
            // s[0] ids into a 32000-row table of rows as wide as s[1].
            std::vector<double> ids(static_cast<std::size_t>(s[0]));
            for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<double>((i * 7919 + seed) % 32000);
            return std::vector<Tensor>{Tensor::from_doubles(ids, {s[0]}, DType::int64).to(kGpu),
                                       random_gpu({32000, s[1]}, d, seed)};
          });
      add(
          "mean", [] { return std::make_unique<MeanFwdOp>(std::int64_t{-1}); }, x_only);
      add(
          "sum", [] { return std::make_unique<SumFwdOp>(std::int64_t{-1}); }, x_only);
      add(
          "prod", [] { return std::make_unique<ProdFwdOp>(std::int64_t{-1}); }, x_only);
      for (bool training : {false, true}) {
        add(
            training ? "batch_norm_train" : "batch_norm_infer",
            [training] { return std::make_unique<BatchNormFwdOp>(training, 0.1, 1e-5); },
            [](const Shape& s, DType d, unsigned seed) {
              const Tensor var = Tensor::from_doubles(std::vector<double>(4096, 1.0), {4096}, DType::float32).to(kGpu);
              return std::vector<Tensor>{random_gpu(s, d, seed), random_gpu({4096}, DType::float32, seed + 1), var,
                                         random_gpu({4096}, DType::float32, seed + 2),
                                         random_gpu({4096}, DType::float32, seed + 3)};
            });
      }
    }
  }
  return out;
}

// Host microseconds per call of `call`: the median of several loops of calls that do not
// wait for the GPU in between.
double host_us(const std::function<void()>& call) {
  for (int i = 0; i < 100; ++i) call();
  check(cudaDeviceSynchronize(), "sync");
  std::vector<double> per_call;
  for (int rep = 0; rep < 7; ++rep) {
    constexpr int kCalls = 2000;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) call();
    const auto end = std::chrono::steady_clock::now();
    per_call.push_back(std::chrono::duration<double, std::micro>(end - start).count() / kCalls);
    check(cudaDeviceSynchronize(), "sync");
  }
  return median(per_call);
}

// The host cost of one cached call of a tiny op (RMSNormFwdOp on [4, 4096] bfloat16, which
// allocates its output), and of its parts: the same-sized AddFwdOp into an `out` buffer (no
// allocation), a stream-ordered allocation and free from the pool, and reading the current
// device.
void print_host_costs() {
  RMSNormFwdOp rms({4096}, 1e-5);
  AddFwdOp add;
  const Tensor x = random_gpu({4, 4096}, DType::bfloat16, 1), w = random_gpu({4096}, DType::bfloat16, 2);
  const Tensor out = random_gpu({4, 4096}, DType::bfloat16, 3);
  const double rms_us = host_us([&] { rms(x, w); });
  const double add_out_us = host_us([&] { add(x, x, out); });
  cudaMemPool_t pool{};
  check(cudaDeviceGetDefaultMemPool(&pool, 0), "pool");
  const double pool_us = host_us([&] {
    void* p = nullptr;
    check(cudaMallocFromPoolAsync(&p, 4 * 4096 * 2, pool, nullptr), "alloc");
    check(cudaFreeAsync(p, nullptr), "free");
  });
  const double device_us = host_us([&] {
    int d = 0;
    check(cudaGetDevice(&d), "get device");
  });
  std::vector<double> launches;
  for (int rep = 0; rep < 7; ++rep) launches.push_back(empty_launch_us(2000));
  std::printf("{\"kind\": \"host_call\", \"op\": \"rms_norm\", \"shape\": [4, 4096], \"dtype\": \"bfloat16\", "
              "\"us\": %.3f, \"add_out_us\": %.3f, \"pool_alloc_free_us\": %.3f, \"get_device_us\": %.3f, "
              "\"empty_launch_us\": %.3f}\n",
              rms_us, add_out_us, pool_us, device_us, median(launches));
}

}  // namespace

int main(int argc, char** argv) {
  load_backends();
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "gpu_op_bench: no CUDA device\n");
    return 1;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "properties");
  const double copy = bench::copy_bandwidth_gbps();
  std::printf("{\"kind\": \"copy\", \"device\": \"%s\", \"gbps\": %.1f}\n", prop.name, copy);
  const std::string only = argc > 1 ? argv[1] : "";
  // The copy rate at each (bytes moved, input copies) of the cases, measured once.
  std::map<std::pair<std::size_t, std::size_t>, double> same_size_copy;
  for (const Case& c : cases()) {
    if (!only.empty() && c.op != only) continue;
    std::unique_ptr<Op> op = c.make();
    std::vector<std::vector<Tensor>> sets{c.inputs(c.shape, c.dtype, 1)};
    std::size_t set_bytes = 0;
    for (const Tensor& t : sets[0]) set_bytes += t.nbytes();
    const std::size_t want = 2 * static_cast<std::size_t>(prop.l2CacheSize);
    while (sets.size() < 64 && sets.size() * set_bytes < want)
      sets.push_back(c.inputs(c.shape, c.dtype, sets.size() + 1));
    op->call(CallArgs(sets[0]));
    const double bytes = op->eval_roofline().bytes;
    const double ms = time_calls([&](int i) { op->call(CallArgs(sets[static_cast<std::size_t>(i)])); },
                                 static_cast<int>(sets.size()));
    const auto key = std::make_pair(static_cast<std::size_t>(bytes), sets.size());
    if (!same_size_copy.count(key)) {
      same_size_copy[key] = bench::copy_bandwidth_gbps(key.first, static_cast<int>(key.second));
    }
    std::printf(
        "{\"kind\": \"op\", \"op\": \"%s\", \"shape\": [%lld, %lld], \"dtype\": \"%s\", \"ms\": %.6f, "
        "\"bytes\": %.0f, \"copies\": %zu, \"same_size_copy_gbps\": %.1f}\n",
        c.op.c_str(), static_cast<long long>(c.shape[0]), static_cast<long long>(c.shape[1]),
        std::string(dtype_name(c.dtype)).c_str(), ms, bytes, sets.size(), same_size_copy[key]);
    std::fflush(stdout);
  }
  print_host_costs();
  return 0;
}
