// Throughput of the CPU kernels. It first measures the machine's memory bandwidth (a large
// memcpy and a STREAM triad, on one thread and on every kernel thread; the best counts), then
// runs each memory-bound kernel at a large and a decode size, reporting GB/s (bytes read plus
// bytes written, each counted once) and bw_ratio, the share of that bandwidth; and GEMM 2048^3
// in GFLOP/s against calling cblas_sgemm directly, the two alternating.
//
// Like STREAM, every figure is the best of several back-to-back runs (kTrials per benchmark
// iteration, the iteration's time being the fastest), so that a busy machine's other work
// disturbs it less. Large kernels also report vs_memcpy: their best time against the best time of
// a multi-threaded memcpy moving as many bytes, run alternately with the kernel, a ratio that a
// machine shared with other work skews far less than the up-front bandwidth. Decode sizes run on
// data that is in cache, as it is between decode steps.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cpu_kernels.hpp"
#include "tileops/half.hpp"

namespace {

using tileops::BFloat16;
using tileops::DType;
using tileops::Half;
namespace cpu = tileops::cpu;

constexpr int kTrials = 5;
// The bandwidth reference takes more trials: it should be the machine's best, not a busy moment's.
constexpr int kBandwidthTrials = 20;

// Bytes per second: the best of the bandwidth measurements.
double g_bandwidth = 0.0;

// A buffer of `count` elements of `dtype` filled with small non-zero values.
class Tensor {
 public:
  Tensor(DType dtype, int64_t count)
      : bytes_(static_cast<std::size_t>(count) * tileops::dtype_size(dtype)) {
    for (int64_t i = 0; i < count; ++i) {
      const float v = static_cast<float>(i % 1013) * 0.001f - 0.5f;
      switch (dtype) {
        case DType::float32:
          std::memcpy(bytes_.data() + 4 * i, &v, 4);
          break;
        case DType::float16: {
          const std::uint16_t h = Half::from_float(v);
          std::memcpy(bytes_.data() + 2 * i, &h, 2);
          break;
        }
        case DType::bfloat16: {
          const std::uint16_t h = BFloat16::from_float(v);
          std::memcpy(bytes_.data() + 2 * i, &h, 2);
          break;
        }
        default:
          break;
      }
    }
  }
  void* data() { return bytes_.data(); }

 private:
  std::vector<std::byte> bytes_;
};

std::string dtype_tag(DType dtype) {
  return dtype == DType::float32 ? "f32" : dtype == DType::float16 ? "f16" : "bf16";
}

// Seconds for body(begin, end) over [0, count) split across `threads` threads, from the first
// part's start to the last part's end: thread start-up is not counted.
double split_seconds(int threads, std::size_t count,
                     const std::function<void(std::size_t, std::size_t)>& body) {
  using Clock = std::chrono::steady_clock;
  std::vector<Clock::time_point> starts(static_cast<std::size_t>(threads));
  std::vector<Clock::time_point> ends(starts.size());
  std::latch ready(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      ready.arrive_and_wait();
      starts[t] = Clock::now();
      body(count * t / threads, count * (t + 1) / threads);
      ends[t] = Clock::now();
    });
  }
  for (std::thread& w : workers) w.join();
  return std::chrono::duration<double>(*std::max_element(ends.begin(), ends.end()) -
                                       *std::min_element(starts.begin(), starts.end()))
      .count();
}

// The fastest of `trials` runs of f, in seconds.
double best_seconds(const std::function<void()>& f, int trials = kTrials) {
  double best = 1e30;
  for (int trial = 0; trial < trials; ++trial) {
    const auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// The fastest of `trials` values of f(), in seconds.
double best_of(const std::function<double()>& f, int trials) {
  double best = 1e30;
  for (int trial = 0; trial < trials; ++trial) best = std::min(best, f());
  return best;
}

constexpr std::size_t kBandwidthElems = std::size_t{64} << 20;  // 256 MiB per float array

// The bandwidth arrays; the first two also serve the memcpy runs beside the kernels.
std::vector<float>& bandwidth_array(int which) {
  static std::vector<float> arrays[3] = {std::vector<float>(kBandwidthElems, 1.0f),
                                         std::vector<float>(kBandwidthElems, 2.0f),
                                         std::vector<float>(kBandwidthElems, 3.0f)};
  return arrays[which];
}

// Seconds for every kernel thread together to memcpy `bytes` (at most 256 MiB).
double memcpy_seconds(std::size_t bytes) {
  auto* dst = reinterpret_cast<std::byte*>(bandwidth_array(0).data());
  const auto* src = reinterpret_cast<const std::byte*>(bandwidth_array(1).data());
  return split_seconds(cpu::thread_count(), bytes, [&](std::size_t i0, std::size_t i1) {
    std::memcpy(dst + i0, src + i0, i1 - i0);
  });
}

void measure_bandwidth() {
  float* a = bandwidth_array(0).data();
  const float* b = bandwidth_array(1).data();
  const float* c = bandwidth_array(2).data();
  std::printf("Memory bandwidth (256 MiB arrays, best of %d):\n", kBandwidthTrials);
  for (int threads : {1, cpu::thread_count()}) {
    const double copy = best_of(
        [&] {
          return split_seconds(threads, kBandwidthElems, [&](std::size_t i0, std::size_t i1) {
            std::memcpy(a + i0, b + i0, (i1 - i0) * sizeof(float));
          });
        },
        kBandwidthTrials);
    const double triad = best_of(
        [&] {
          return split_seconds(threads, kBandwidthElems, [&](std::size_t i0, std::size_t i1) {
            for (std::size_t i = i0; i < i1; ++i) a[i] = b[i] + 3.0f * c[i];
          });
        },
        kBandwidthTrials);
    const double copy_bw = 2.0 * kBandwidthElems * sizeof(float) / copy;
    const double triad_bw = 3.0 * kBandwidthElems * sizeof(float) / triad;
    std::printf("  %2d thread(s): memcpy %6.1f GB/s   triad %6.1f GB/s\n", threads, copy_bw / 1e9,
                triad_bw / 1e9);
    g_bandwidth = std::max({g_bandwidth, copy_bw, triad_bw});
  }
  std::printf("  reference bandwidth (best): %.1f GB/s; kernel threads: %d; ISA: %s\n\n",
              g_bandwidth / 1e9, cpu::thread_count(),
              std::string(cpu::isa_name(cpu::active_isa())).c_str());
}

void set_bandwidth_counters(benchmark::State& state, double bytes) {
  state.counters["GB/s"] =
      benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bw_ratio"] =
      benchmark::Counter(bytes / g_bandwidth, benchmark::Counter::kIsIterationInvariantRate);
}

// Kernels moving at least this much also get the alternating memcpy reference.
constexpr double kMemcpyReferenceBytes = 8 << 20;

// Registers a memory-bound kernel benchmark: run() is one call, `bytes` what it moves.
void add_memory_bound(const std::string& name, double bytes, std::function<void()> run) {
  const auto body = [bytes, run = std::move(run)](benchmark::State& state) {
    const bool reference = bytes >= kMemcpyReferenceBytes;
    // Copying half the bytes moves as many bytes; beyond the arrays' size the time is scaled.
    const double copy_bytes = std::min(bytes / 2, static_cast<double>(kBandwidthElems * 4));
    const double copy_scale = bytes / 2 / copy_bytes;
    double best_kernel = 1e30, best_copy = 1e30;
    for (auto _ : state) {
      double best = 1e30;
      for (int trial = 0; trial < kTrials; ++trial) {
        best = std::min(best, best_seconds(run, 1));
        if (reference) {
          const double copy = memcpy_seconds(static_cast<std::size_t>(copy_bytes)) * copy_scale;
          best_copy = std::min(best_copy, copy);
        }
      }
      best_kernel = std::min(best_kernel, best);
      state.SetIterationTime(best);
    }
    set_bandwidth_counters(state, bytes);
    if (reference) state.counters["vs_memcpy"] = best_copy / best_kernel;
  };
  benchmark::RegisterBenchmark(name.c_str(), body)->UseManualTime()->Unit(benchmark::kMicrosecond);
}

// Buffers shared by the benchmark closures that use them, alive until the program ends.
template <class T>
std::shared_ptr<T> hold(T value) {
  return std::make_shared<T>(std::move(value));
}

void register_row_kernels() {
  struct Rows {
    int64_t rows, n;
  };
  for (DType dtype : {DType::float32, DType::bfloat16}) {
    const double es = static_cast<double>(tileops::dtype_size(dtype));
    for (const Rows& s : {Rows{2048, 4096}, Rows{16384, 4096}, Rows{1, 4096}}) {
      if (s.rows == 16384 && dtype != DType::float32) continue;
      const std::string shape = std::to_string(s.rows) + "x" + std::to_string(s.n);
      const auto x = hold(Tensor(dtype, s.rows * s.n));
      const auto y = hold(Tensor(dtype, s.rows * s.n));
      const auto w = hold(Tensor(dtype, s.n));
      const double bytes = es * static_cast<double>(2 * s.rows * s.n + s.n);
      add_memory_bound("rms_norm/" + dtype_tag(dtype) + "/" + shape, bytes, [=] {
        cpu::rms_norm(dtype, s.rows, s.n, x->data(), w->data(), y->data(), 1e-6);
      });
      add_memory_bound("layer_norm/" + dtype_tag(dtype) + "/" + shape, bytes + es * s.n, [=] {
        cpu::layer_norm(dtype, s.rows, s.n, x->data(), w->data(), w->data(), y->data(), 1e-5);
      });
      add_memory_bound("softmax/" + dtype_tag(dtype) + "/" + shape, es * 2 * s.rows * s.n,
                       [=] { cpu::softmax(dtype, s.rows, s.n, x->data(), y->data()); });
      add_memory_bound("relu/" + dtype_tag(dtype) + "/" + shape, es * 2 * s.rows * s.n,
                       [=] { cpu::relu(dtype, s.rows * s.n, x->data(), y->data()); });
      add_memory_bound("add/" + dtype_tag(dtype) + "/" + shape, es * 3 * s.rows * s.n, [=] {
        cpu::add(dtype, s.rows * s.n, x->data(), y->data(), y->data(), 1.0);
      });
      add_memory_bound("add_row_broadcast/" + dtype_tag(dtype) + "/" + shape,
                       es * (2 * s.rows * s.n + s.n), [=] {
                         cpu::add_row_broadcast(dtype, s.rows, s.n, x->data(), w->data(), y->data(),
                                                1.0);
                       });
    }
    for (const Rows& s : {Rows{2048, 11008}, Rows{1, 11008}}) {
      const std::string shape = std::to_string(s.rows) + "x" + std::to_string(s.n);
      const auto x = hold(Tensor(dtype, s.rows * 2 * s.n));
      const auto y = hold(Tensor(dtype, s.rows * s.n));
      add_memory_bound("silu_and_mul/" + dtype_tag(dtype) + "/" + shape, es * 3 * s.rows * s.n,
                       [=] { cpu::silu_and_mul(dtype, s.rows, s.n, x->data(), y->data()); });
    }
  }
}

void register_reductions() {
  struct Case {
    std::string name;
    DType in, out;
    int64_t outer, reduce, inner;
    bool prod;
  };
  const std::vector<Case> cases = {
      {"reduce_sum/f32/[2048,4096,1]", DType::float32, DType::float32, 2048, 4096, 1, false},
      {"reduce_sum/f32/[1,2048,4096]", DType::float32, DType::float32, 1, 2048, 4096, false},
      {"reduce_sum/f32/[256,64,512]", DType::float32, DType::float32, 256, 64, 512, false},
      {"reduce_sum/f32/[65536,64,2]", DType::float32, DType::float32, 65536, 64, 2, false},
      {"reduce_sum/f32/[1,8388608,1]", DType::float32, DType::float32, 1, 8388608, 1, false},
      {"reduce_sum/bf16->f32/[2048,4096,1]", DType::bfloat16, DType::float32, 2048, 4096, 1, false},
      {"reduce_sum/f32/[1,4096,1]", DType::float32, DType::float32, 1, 4096, 1, false},
      {"reduce_prod/f32/[2048,4096,1]", DType::float32, DType::float32, 2048, 4096, 1, true},
      {"reduce_prod/f32/[1,2048,4096]", DType::float32, DType::float32, 1, 2048, 4096, true},
  };
  for (const Case& c : cases) {
    const auto x = hold(Tensor(c.in, c.outer * c.reduce * c.inner));
    const auto y = hold(Tensor(c.out, c.outer * c.inner));
    const double bytes =
        static_cast<double>(tileops::dtype_size(c.in) * c.outer * c.reduce * c.inner +
                            tileops::dtype_size(c.out) * c.outer * c.inner);
    add_memory_bound(c.name, bytes, [=] {
      if (c.prod) {
        cpu::reduce_prod(c.in, c.out, c.outer, c.reduce, c.inner, x->data(), y->data());
      } else {
        cpu::reduce_sum(c.in, c.out, c.outer, c.reduce, c.inner, x->data(), y->data());
      }
    });
  }
}

void register_batch_norm_and_alibi() {
  const int64_t N = 32, C = 64, inner = 56 * 56;
  for (DType dtype : {DType::float32, DType::bfloat16}) {
    const auto x = hold(Tensor(dtype, N * C * inner));
    const auto y = hold(Tensor(dtype, N * C * inner));
    const auto stats = hold(std::vector<float>(4 * C, 1.0f));
    const double bytes = static_cast<double>(2 * N * C * inner * tileops::dtype_size(dtype));
    const std::string shape = "/[32,64,3136]";
    add_memory_bound("batch_norm_infer/" + dtype_tag(dtype) + shape, bytes, [=] {
      float* s = stats->data();
      cpu::batch_norm_infer(dtype, N, C, inner, x->data(), s, s + C, s + 2 * C, s + 3 * C,
                            y->data(), 1e-5);
    });
    const auto out = hold(std::vector<float>(4 * C, 1.0f));
    add_memory_bound("batch_norm_train/" + dtype_tag(dtype) + shape, bytes, [=] {
      float* s = stats->data();
      float* o = out->data();
      cpu::batch_norm_train(dtype, N, C, inner, x->data(), s, s + C, y->data(), o, o + C, o + 2 * C,
                            o + 3 * C, 0.1, 1e-5);
    });
  }
  for (const auto& [heads, seq] : std::vector<std::pair<int64_t, int64_t>>{{32, 2048}, {32, 128}}) {
    const auto y = hold(Tensor(DType::float32, heads * seq * seq));
    add_memory_bound("alibi/f32/" + std::to_string(heads) + "x" + std::to_string(seq) + "^2",
                     static_cast<double>(4 * heads * seq * seq),
                     [=] { cpu::alibi(DType::float32, heads, seq, y->data()); });
  }
}

// GEMM 2048^3 of `dtype` through tileops against cblas_sgemm on float32 operands, alternating;
// the iteration time is tileops' best.
void register_gemm() {
  constexpr int64_t n = 2048;
  constexpr double gflop = 2.0 * n * n * n / 1e9;
  const auto a = hold(Tensor(DType::float32, n * n));
  const auto b = hold(Tensor(DType::float32, n * n));
  const auto d = hold(Tensor(DType::float32, n * n));
  for (DType dtype : {DType::float32, DType::bfloat16, DType::float16}) {
    const auto ah = hold(Tensor(dtype, n * n));
    const auto bh = hold(Tensor(dtype, n * n));
    const auto dh = hold(Tensor(dtype, n * n));
    const auto direct = [=] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f,
                  static_cast<const float*>(a->data()), n, static_cast<const float*>(b->data()), n,
                  0.0f, static_cast<float*>(d->data()), n);
    };
    const auto tileops = [=] {
      cpu::gemm(dtype, n, n, n, ah->data(), n, false, bh->data(), n, false, dh->data(), n);
    };
    benchmark::RegisterBenchmark(("gemm/" + dtype_tag(dtype) + "/2048^3").c_str(),
                                 [=](benchmark::State& state) {
                                   double best_direct = 1e30, best_tileops = 1e30;
                                   for (auto _ : state) {
                                     double best = 1e30;
                                     for (int trial = 0; trial < kTrials; ++trial) {
                                       best_direct = std::min(best_direct, best_seconds(direct, 1));
                                       best = std::min(best, best_seconds(tileops, 1));
                                     }
                                     best_tileops = std::min(best_tileops, best);
                                     state.SetIterationTime(best);
                                   }
                                   state.counters["GFLOP/s"] = gflop / best_tileops;
                                   state.counters["sgemm_GFLOP/s"] = gflop / best_direct;
                                   state.counters["vs_sgemm"] = best_direct / best_tileops;
                                 })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  measure_bandwidth();
  register_row_kernels();
  register_reductions();
  register_batch_norm_and_alibi();
  register_gemm();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
