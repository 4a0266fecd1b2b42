// Throughput of the ops as applications call them: op(...) with the dispatch overhead
// included. Memory-bound ops are reported as achieved GB/s (the manifest roofline's bytes over
// the time) and as a share of the memory bandwidth this same run measured (the best of a
// two-thread memcpy and a STREAM triad over 256 MiB arrays). Rows of 2048x4096 float32 partly
// fit in the last-level cache and can exceed that bandwidth; 16384-row variants do not. GEMM as GFLOP/s and as a share of the same BLAS
// called directly. Times are the best of several calls after a warm-up, as STREAM reports.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "tileops/extend/backend.hpp"
#include "tileops/ops/batch_norm.hpp"
#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/gemm.hpp"
#include "tileops/ops/layer_norm.hpp"
#include "tileops/ops/reduction.hpp"
#include "tileops/ops/rms_norm.hpp"
#include "tileops/ops/softmax.hpp"
#include "tileops/testing.hpp"

namespace {

using namespace tileops;
using Clock = std::chrono::steady_clock;

double best_seconds(const std::function<void()>& fn, int trials) {
  fn();  // warm-up: selection, entry building, first touch of the outputs
  double best = 1e30;
  for (int i = 0; i < trials; ++i) {
    const auto start = Clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

// Runs body(begin, end) over [0, n) split across `threads` threads.
void split(int threads, std::size_t n, const std::function<void(std::size_t, std::size_t)>& body) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] { body(n * t / threads, n * (t + 1) / threads); });
  }
  for (auto& th : pool) th.join();
}

// Bytes per second: the best of a memcpy and a STREAM triad over 256 MiB arrays, one thread per core.
double memory_bandwidth() {
  constexpr std::size_t n = std::size_t{64} << 20;
  std::vector<float> a(n, 1.0f), b(n, 2.0f), c(n, 3.0f);
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const double copy = best_seconds([&] {
    split(threads, n, [&](std::size_t i0, std::size_t i1) { std::memcpy(&a[i0], &b[i0], (i1 - i0) * sizeof(float)); });
  }, 10);
  const double triad = best_seconds([&] {
    split(threads, n, [&](std::size_t i0, std::size_t i1) {
      for (std::size_t i = i0; i < i1; ++i) a[i] = b[i] + 3.0f * c[i];
    });
  }, 10);
  return std::max(2.0 * n * sizeof(float) / copy, 3.0 * n * sizeof(float) / triad);
}

Tensor random(std::vector<std::int64_t> shape, DType dtype) {
  return testing::random_tensors({TensorSpec{Device::cpu(), dtype, Shape(shape.begin(), shape.end())}}, Device::cpu())[0];
}

struct Row {
  std::string name;
  std::function<void()> call;
  Op* op;
};

}  // namespace

int main() {
  load_backends();
  const double bandwidth = memory_bandwidth();
  std::printf("memory bandwidth (best of memcpy and triad, this run): %.1f GB/s\n\n", bandwidth / 1e9);
  std::printf("%-34s %10s %10s %8s  %s\n", "op (through op(...))", "ms", "GB/s", "of bw", "kernel");

  std::vector<Row> rows;
  const Tensor x_f32 = random({2048, 4096}, DType::float32);
  const Tensor big = random({16384, 4096}, DType::float32);  // 256 MiB: beyond any cache
  const Tensor x_bf16 = random({2048, 4096}, DType::bfloat16);
  const Tensor w_f32 = random({4096}, DType::float32);
  const Tensor w_bf16 = random({4096}, DType::bfloat16);
  const Tensor h_f32 = random({2048, 2 * 11008}, DType::float32);
  const Tensor img = random({32, 64, 3136}, DType::float32);
  const Tensor stat = Tensor::zeros({64}, DType::float32);
  const Tensor ones = random({64}, DType::float32);
  auto rms = std::make_unique<RMSNormFwdOp>(std::vector<std::int64_t>{4096}, 1e-6);
  auto rms_bf16 = std::make_unique<RMSNormFwdOp>(std::vector<std::int64_t>{4096}, 1e-6);
  auto ln = std::make_unique<LayerNormFwdOp>(std::vector<std::int64_t>{4096});
  auto softmax = std::make_unique<SoftmaxFwdOp>();
  auto silu = std::make_unique<SiluAndMulFwdOp>();
  auto add = std::make_unique<AddFwdOp>();
  auto relu = std::make_unique<ReluFwdOp>();
  auto bn = std::make_unique<BatchNormFwdOp>(false);
  auto sum = std::make_unique<SumFwdOp>(std::int64_t{-1});
  rows.push_back({"RMSNorm 2048x4096 f32", [&] { (*rms)(x_f32, w_f32); }, rms.get()});
  rows.push_back({"RMSNorm 2048x4096 bf16", [&] { (*rms_bf16)(x_bf16, w_bf16); }, rms_bf16.get()});
  rows.push_back({"LayerNorm 2048x4096 f32", [&] { (*ln)(x_f32, w_f32, w_f32); }, ln.get()});
  rows.push_back({"Softmax 2048x4096 f32", [&] { (*softmax)(x_f32); }, softmax.get()});
  rows.push_back({"SiluAndMul 2048x(2x11008) f32", [&] { (*silu)(h_f32); }, silu.get()});
  rows.push_back({"Add 2048x4096 + 4096 f32", [&] { (*add)(x_f32, w_f32); }, add.get()});
  rows.push_back({"Relu 2048x4096 f32", [&] { (*relu)(x_f32); }, relu.get()});
  rows.push_back({"BatchNorm infer 32x64x3136 f32", [&] { (*bn)(img, stat, ones); }, bn.get()});
  rows.push_back({"Sum 2048x4096 dim=-1 f32", [&] { (*sum)(x_f32); }, sum.get()});
  rows.push_back({"RMSNorm 16384x4096 f32", [&] { (*rms)(big, w_f32); }, rms.get()});
  rows.push_back({"Softmax 16384x4096 f32", [&] { (*softmax)(big); }, softmax.get()});
  rows.push_back({"Add 16384x4096 + 4096 f32", [&] { (*add)(big, w_f32); }, add.get()});
  rows.push_back({"Relu 16384x4096 f32", [&] { (*relu)(big); }, relu.get()});
  rows.push_back({"Sum 16384x4096 dim=-1 f32", [&] { (*sum)(big); }, sum.get()});
  for (const Row& r : rows) {
    const double s = best_seconds(r.call, 10);
    const double bytes = r.op->eval_roofline().bytes;
    std::string kernel;
    for (const InterfaceDecl& d : r.op->op_class().interfaces()) {
      for (const BuiltEntry& e : r.op->built_entries(d.name)) kernel += (kernel.empty() ? "" : ",") + e.key;
    }
    std::printf("%-34s %10.3f %10.1f %7.0f%%  %s\n", r.name.c_str(), s * 1e3, bytes / s / 1e9, 100 * bytes / s / bandwidth,
                kernel.c_str());
  }

  constexpr int n = 2048;
  const Tensor a = random({n, n}, DType::float32);
  const Tensor b = random({n, n}, DType::float32);
  GemmFwdOp gemm(false, false);
  const double through_op = best_seconds([&] { gemm(a, b); }, 5);
  std::vector<float> d(static_cast<std::size_t>(n) * n);
  const double direct = best_seconds([&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data<float>(), n, b.data<float>(), n, 0.0f,
                d.data(), n);
  }, 5);
  const double flops = 2.0 * n * n * n;
  std::printf("\n%-34s %10s %10s %8s\n", "GEMM 2048^3 f32", "ms", "GFLOP/s", "of BLAS");
  std::printf("%-34s %10.3f %10.1f %7.0f%%\n", "op(...) (cpu_blas_gemm)", through_op * 1e3, flops / through_op / 1e9,
              100 * direct / through_op);
  std::printf("%-34s %10.3f %10.1f %7s\n", "cblas_sgemm directly", direct * 1e3, flops / direct / 1e9, "100%");
  return 0;
}
