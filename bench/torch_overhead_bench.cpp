// Per-call overhead of a cached tileops call against libtorch's, on tiny float32 tensors, in
// one process on one thread. Each case times three things doing the same arithmetic: the
// tileops op, the libtorch function, and the arithmetic alone as a plain loop. A call's
// overhead is its time less the loop's. The variants of every case run interleaved, round
// after round, and each figure is the median over the rounds, so that a slow stretch of a
// noisy machine hits every variant alike.
//
// Usage: torch_overhead_bench [rounds] [calls per round]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "tileops/ops/elementwise.hpp"
#include "tileops/ops/layer_norm.hpp"
#include "tileops/ops/rms_norm.hpp"
#include "tileops/ops/softmax.hpp"

namespace {

constexpr std::int64_t kRows = 1;
constexpr std::int64_t kCols = 64;
constexpr std::int64_t kElems = kRows * kCols;

// Keeps the compiler from dropping work whose result is only written to memory.
void clobber(const void* p) { asm volatile("" : : "r"(p) : "memory"); }

struct Variant {
  std::string name;
  std::function<void()> call;
  std::vector<double> ns;  // per round, ns per call
  double median() const {
    std::vector<double> v = ns;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  }
};

struct Case {
  std::string name;
  Variant tileops;
  Variant torch;  // empty name: libtorch has no such function
  Variant loop;
};

double time_calls(const std::function<void()>& f, int calls) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) f();
  const auto end = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(end - start).count() / calls;
}

void add_loop(const float* a, const float* b, float* y) {
  for (std::int64_t i = 0; i < kElems; ++i) y[i] = a[i] + b[i];
  clobber(y);
}

void rms_norm_loop(const float* x, const float* w, float* y) {
  for (std::int64_t r = 0; r < kRows; ++r) {
    const float* xr = x + r * kCols;
    float ss = 0;
    for (std::int64_t i = 0; i < kCols; ++i) ss += xr[i] * xr[i];
    const float inv = 1.0f / std::sqrt(ss / kCols + 1e-6f);
    for (std::int64_t i = 0; i < kCols; ++i) y[r * kCols + i] = xr[i] * inv * w[i];
  }
  clobber(y);
}

void layer_norm_loop(const float* x, const float* w, const float* b, float* y) {
  for (std::int64_t r = 0; r < kRows; ++r) {
    const float* xr = x + r * kCols;
    float mean = 0;
    for (std::int64_t i = 0; i < kCols; ++i) mean += xr[i];
    mean /= kCols;
    float var = 0;
    for (std::int64_t i = 0; i < kCols; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    const float inv = 1.0f / std::sqrt(var / kCols + 1e-5f);
    for (std::int64_t i = 0; i < kCols; ++i) y[r * kCols + i] = (xr[i] - mean) * inv * w[i] + b[i];
  }
  clobber(y);
}

void softmax_loop(const float* x, float* y) {
  for (std::int64_t r = 0; r < kRows; ++r) {
    const float* xr = x + r * kCols;
    float m = xr[0];
    for (std::int64_t i = 1; i < kCols; ++i) m = std::max(m, xr[i]);
    float sum = 0;
    for (std::int64_t i = 0; i < kCols; ++i) {
      const float e = std::exp(xr[i] - m);
      y[r * kCols + i] = e;
      sum += e;
    }
    for (std::int64_t i = 0; i < kCols; ++i) y[r * kCols + i] /= sum;
  }
  clobber(y);
}

tileops::Tensor filled(std::vector<std::int64_t> shape) {
  tileops::Tensor t = tileops::Tensor::empty(shape, tileops::DType::float32);
  float* p = t.data<float>();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = 0.5f + 0.01f * static_cast<float>(i % 37);
  return t;
}

int positive_arg(int argc, char** argv, int index, int fallback) {
  if (argc <= index) return fallback;
  char* end = nullptr;
  const long v = std::strtol(argv[index], &end, 10);
  if (*end != '\0' || v < 1 || v > 1000000) {
    std::fprintf(stderr, "torch_overhead_bench: argument %d must be an integer in [1, 1000000], got '%s'\n", index,
                 argv[index]);
    std::exit(2);
  }
  return static_cast<int>(v);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = positive_arg(argc, argv, 1, 31);
  const int calls = positive_arg(argc, argv, 2, 2000);
  at::set_num_threads(1);
  using tileops::Tensor;

  // tileops tensors, and torch tensors over the same memory.
  const Tensor a = filled({kRows, kCols}), b = filled({kRows, kCols}), w = filled({kCols}), bias = filled({kCols});
  const Tensor out = Tensor::empty({kRows, kCols}, tileops::DType::float32);
  const auto view = [](const Tensor& t) {
    return torch::from_blob(t.data_ptr(), std::vector<std::int64_t>(t.shape().begin(), t.shape().end()),
                            torch::kFloat32);
  };
  const torch::Tensor ta = view(a), tb = view(b), tw = view(w), tbias = view(bias);
  torch::Tensor tout = view(out);
  std::vector<float> scratch(kElems);
  float* y = scratch.data();

  tileops::AddFwdOp add;
  tileops::RMSNormFwdOp rms({kCols}, 1e-6);
  tileops::LayerNormFwdOp ln({kCols}, 1e-5);
  tileops::SoftmaxFwdOp softmax(-1);

  std::vector<Case> cases;
  cases.push_back({"add, out given",
                   {"AddFwdOp(a, b, out)", [&] { clobber(add(a, b, out).data_ptr()); }, {}},
                   {"at::add_out", [&] { clobber(at::add_out(tout, ta, tb).data_ptr()); }, {}},
                   {"loop", [&] { add_loop(a.data<float>(), b.data<float>(), y); }, {}}});
  cases.push_back({"add, output allocated",
                   {"AddFwdOp(a, b)", [&] { clobber(add(a, b).data_ptr()); }, {}},
                   {"at::add", [&] { clobber(at::add(ta, tb).data_ptr()); }, {}},
                   {"loop", [&] { add_loop(a.data<float>(), b.data<float>(), y); }, {}}});
  cases.push_back({"rms_norm",
                   {"RMSNormFwdOp(x, w)", [&] { clobber(rms(a, w).data_ptr()); }, {}},
                   {"", {}, {}},
                   {"loop", [&] { rms_norm_loop(a.data<float>(), w.data<float>(), y); }, {}}});
  cases.push_back({"layer_norm",
                   {"LayerNormFwdOp(x, w, b)", [&] { clobber(ln(a, w, bias).data_ptr()); }, {}},
                   {"at::layer_norm", [&] { clobber(at::layer_norm(ta, {kCols}, tw, tbias, 1e-5).data_ptr()); }, {}},
                   {"loop", [&] { layer_norm_loop(a.data<float>(), w.data<float>(), bias.data<float>(), y); }, {}}});
  cases.push_back({"softmax",
                   {"SoftmaxFwdOp(x)", [&] { clobber(softmax(a).data_ptr()); }, {}},
                   {"at::softmax", [&] { clobber(at::softmax(ta, -1).data_ptr()); }, {}},
                   {"loop", [&] { softmax_loop(a.data<float>(), y); }, {}}});

  for (Case& c : cases) {  // warm up: select targets, build kernels, fill caches
    for (Variant* v : {&c.tileops, &c.torch, &c.loop}) {
      if (v->call) time_calls(v->call, calls);
    }
  }
  for (int r = 0; r < rounds; ++r) {
    for (Case& c : cases) {
      for (Variant* v : {&c.tileops, &c.torch, &c.loop}) {
        if (v->call) v->ns.push_back(time_calls(v->call, calls));
      }
    }
  }

  std::printf("Call overhead on [%lld, %lld] float32, one thread, median of %d rounds of %d calls (ns per call)\n\n",
              static_cast<long long>(kRows), static_cast<long long>(kCols), rounds, calls);
  std::printf("| case | tileops | call ns | overhead ns | libtorch | call ns | overhead ns | tileops / libtorch overhead |\n");
  std::printf("| --- | --- | ---: | ---: | --- | ---: | ---: | ---: |\n");
  for (const Case& c : cases) {
    const double loop = c.loop.median();
    const double t = c.tileops.median();
    if (c.torch.call) {
      const double th = c.torch.median();
      std::printf("| %s | %s | %.1f | %.1f | %s | %.1f | %.1f | %.2f |\n", c.name.c_str(), c.tileops.name.c_str(), t,
                  t - loop, c.torch.name.c_str(), th, th - loop, (t - loop) / (th - loop));
    } else {
      std::printf("| %s | %s | %.1f | %.1f | (none in libtorch) | | | |\n", c.name.c_str(), c.tileops.name.c_str(), t,
                  t - loop);
    }
  }
  const double alloc_cost = cases[1].tileops.median() - cases[0].tileops.median();
  std::printf("\nAllocating AddFwdOp call less the call with out: %.1f ns\n", alloc_cost);
  return 0;
}
