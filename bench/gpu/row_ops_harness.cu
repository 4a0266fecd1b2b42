// A standalone timing of the memory-bound kernels (elementwise.cu, row_norm.cu, softmax.cu and
// batch_norm.cu compiled in, no plugin) on [16384, 4096] float16 against a copy of the same bytes,
// each launched alone back to back: what the kernels reach without the op call around them, the
// cost a stream-ordered allocation per call adds, the flat kernels' block shapes at two sizes, the
// row kernels' block shapes and grids (one block a row against the resident blocks looping, at
// 2048 to 16384 rows), batch norm's output pass at rows per thread and statistics pass at
// split counts and loads in flight, and the launchers' whole batch norm (training as three
// launches, with the statistics at the launcher's split count and in one wave, and as one
// keeping 0 to 24 rows a thread on chip, also at [2048, 4096] against a copy of that size, beside
// the fixed cost of a cooperative launch of that grid and of its grid barriers); before them,
// GELU's erf form's error over every float16 input from -16 to 4. The figures behind the launchers' choices. With the argument
// `profile` it launches each launcher's 16-bit kernels once (GELU erf, RMSNorm, LayerNorm and
// softmax in bfloat16, LayerNorm in float16, batch norm inference and training in float16, training as one
// launch keeping 16 rows and none, as three launches and over [2048, 4096]) and stops: a profiler's
// target (`ncu -k regex:. row_ops_harness profile`). Built as bench/gpu/row_ops_harness by the CUDA build, or alone from the repository root:
//   nvcc -std=c++20 -gencode=arch=compute_90a,code=sm_90a -O2 -I core/include
//        -I <build>/core/include -I plugins/gpu_common/host bench/gpu/row_ops_harness.cu -o row_ops_harness
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "../../plugins/gpu_common/kernels/elementwise.cu"
#include "../../plugins/gpu_common/kernels/row_norm.cu"
#include "../../plugins/gpu_common/kernels/softmax.cu"
#include "../../plugins/gpu_common/kernels/batch_norm.cu"

#include "harness_library.hpp"
#include "harness_timing.hpp"

// Named, not anonymous: nvcc's host stubs cannot name a kernel argument type of an anonymous
// namespace here.
namespace harness {
using tileops::gpu::store_as;
using tileops::gpu::to_float;
// The erf form as PyTorch writes it (no tail branch), to tell the branch's cost from erff's.
struct GeluErfPlain {
  template <class T>
  __device__ T operator()(T v) const {
    const float f = to_float(v);
    return store_as<T>(0.5f * f * (1.0f + erff(f * 0.70710678118654752f)));
  }
};
// A cooperative kernel that does nothing but cross `barriers` grid barriers: the fixed cost of the
// single-launch batch norm's launch and of its two barriers.
__global__ void grid_barriers_only(int barriers) {
  for (int i = 0; i < barriers; ++i) tileops::gpu::grid_barrier();
}
// Softmax over rows held in registers, as softmax_rows_in_registers, but each thread issues its
// loads of the block's next row before the current row's two block reductions, so that a
// multiprocessor keeps up to two rows a block in flight while it reduces.
template <class T, int kVec, int kPacks>
__global__ void __launch_bounds__(1024)
    softmax_rows_prefetched(const T* __restrict__ x, T* __restrict__ y, std::int64_t rows, std::int64_t n) {
  using namespace tileops::gpu;
  __shared__ float scratch[kMaxWarps];
  Pack<T, kVec> next[kPacks];
  const auto load_row = [&](std::int64_t row) {
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const std::int64_t e = (static_cast<std::int64_t>(p) * blockDim.x + threadIdx.x) * kVec;
      if (row < rows && e < n) next[p] = load_pack<kVec>(x + row * n + e);
    }
  };
  load_row(blockIdx.x);
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    float v[kPacks][kVec];
    float local_max = -__builtin_huge_valf();
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const std::int64_t e = (static_cast<std::int64_t>(p) * blockDim.x + threadIdx.x) * kVec;
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        v[p][k] = e < n ? pack_float(next[p], k) : -__builtin_huge_valf();
        local_max = fmaxf(local_max, v[p][k]);
      }
    }
    load_row(row + gridDim.x);
    const float row_max = block_reduce(local_max, Max{}, -__builtin_huge_valf(), scratch);
    float local_sum = 0.0f;
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        v[p][k] = __expf(v[p][k] - row_max);
        local_sum += v[p][k];
      }
    }
    const float inv_sum = 1.0f / block_reduce(local_sum, Add{}, 0.0f, scratch);
    T* yr = y + row * n;
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const std::int64_t e = (static_cast<std::int64_t>(p) * blockDim.x + threadIdx.x) * kVec;
      if (e < n) {
#pragma unroll
        for (int k = 0; k < kVec; ++k) v[p][k] *= inv_sum;
        store_pack(yr + e, pack_from_floats<T>(v[p]));
      }
    }
  }
}
}  // namespace harness

namespace {

using namespace tileops::gpu;
using tileops::DType;

using harness::time_ms;

constexpr std::int64_t kRows = 16384, kN = 4096;

float half_bits_to_float(std::uint16_t h) {
  __half_raw r;
  r.x = h;
  return __half2float(__half(r));
}
std::uint16_t float_to_half_bits(float f) { return __half_raw(__float2half_rn(f)).x; }
float bf16_bits_to_float(std::uint16_t h) {
  const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// The erf form's worst error over float16 inputs from -16 to 4, in units of the float16 spacing at
// the exact result (so a relative error, also where the result is tiny).
void check_gelu_erf_tail() {
  std::vector<std::uint16_t> in;
  for (float v = -16.0f; v <= 4.0f; v = std::nextafter(v, 5.0f)) {
    const std::uint16_t h = float_to_half_bits(v);
    if (in.empty() || in.back() != h) in.push_back(h);
  }
  const std::size_t bytes = in.size() * 2;
  void *x = nullptr, *y = nullptr;
  harness::cuda(cudaMalloc(&x, bytes), "malloc");
  harness::cuda(cudaMalloc(&y, bytes), "malloc");
  harness::cuda(cudaMemcpy(x, in.data(), bytes, cudaMemcpyHostToDevice), "upload");
  launch_gelu({x, y, static_cast<std::int64_t>(in.size()), DType::float16, false}, nullptr);
  std::vector<std::uint16_t> out(in.size());
  harness::cuda(cudaMemcpy(out.data(), y, bytes, cudaMemcpyDeviceToHost), "download");
  double worst = 0, worst_x = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const double v = half_bits_to_float(in[i]);
    const double exact = 0.5 * v * std::erfc(-v / std::sqrt(2.0));
    // float16 spacing at |exact|: 2^(e - 10) for normal values, 2^-24 below 2^-14.
    const double spacing = std::ldexp(1.0, std::max(std::ilogb(std::max(std::abs(exact), 1e-30)), -14) - 10);
    const double err = std::abs(static_cast<double>(half_bits_to_float(out[i])) - exact) / spacing;
    if (err > worst) {
      worst = err;
      worst_x = v;
    }
  }
  std::printf("gelu erf float16 over %zu inputs in [-16, 4]: worst error %.2f spacings (at x = %g)\n\n", in.size(),
              worst, worst_x);
  cudaFree(x);
  cudaFree(y);
}

// Batch norm over [rows, kN] float16 as [n, channels] (x and y of that size): statistics buffers
// of ones and the training workspace, on the device.
struct BatchNormCase {
  BatchNormArgs args;
  void* workspace;
};

BatchNormCase batch_norm_case(const void* x, void* y, std::int64_t rows) {
  std::vector<float> stats_host(static_cast<std::size_t>(kN) * 6, 1.0f);
  float* stats = nullptr;
  harness::cuda(cudaMalloc(&stats, stats_host.size() * 4), "malloc");
  harness::cuda(cudaMemcpy(stats, stats_host.data(), stats_host.size() * 4, cudaMemcpyHostToDevice), "upload");
  int sms = 0;
  harness::cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "attribute");
  BatchNormCase c{{x, y, rows, kN, 1, stats, stats + kN, stats + 2 * kN, stats + 3 * kN, stats + 4 * kN,
                   stats + 5 * kN, 1e-5, 0.0, DType::float16, sms},
                  nullptr};
  c.args.single_launch = batch_norm_single_launch(DType::float16);
  harness::cuda(cudaMalloc(&c.workspace, batch_norm_training_workspace_bytes(c.args)), "malloc");
  return c;
}

// Downloads n floats.
std::vector<float> download(const float* p, std::int64_t n) {
  std::vector<float> host(static_cast<std::size_t>(n));
  harness::cuda(cudaMemcpy(host.data(), p, host.size() * 4, cudaMemcpyDeviceToHost), "download");
  return host;
}

// Training as three launches and as one cooperative launch keeping 0 to 24 rows a thread in
// shared memory, timed against `copy` (the same bytes' copy), and how far each one launch's batch
// statistics and outputs are from the three launches' (y of the three launches kept aside).
void batch_norm_training_rows(BatchNormCase bn, double copy, const char* shape) {
  const std::size_t bytes = static_cast<std::size_t>(bn.args.n * kN) * 2;
  const BatchNormPlan plan = plan_batch_norm(bn.args, true);
  std::printf("single launch%s by default: %s, %d blocks a multiprocessor, %d rows kept, %lld splits\n", shape,
              plan.one_launch ? "planned" : "not planned", bn.args.single_launch.blocks,
              bn.args.single_launch.kept_rows, static_cast<long long>(plan.splits));
  BatchNormCase three = bn;
  three.args.single_launch = {};
  harness::cuda(cudaMalloc(&three.workspace, batch_norm_training_workspace_bytes(three.args)), "malloc");
  // Two transfers of x in and one out at best, against the copy's one in and one out.
  const double three_ms =
      harness::time_ms([&] { launch_batch_norm(three.args, true, three.workspace, nullptr); });
  std::printf("| batch_norm training%s (launcher, three launches) | %.4f | %.0f%% (three transfers: %.0f%%) |\n",
              shape, three_ms, 100 * copy / three_ms, 150 * copy / three_ms);
  // The three launches with the statistics pass in one wave, the single launch's splits, instead
  // of the launcher's four blocks a multiprocessor.
  BatchNormPlan one_wave = plan_batch_norm(three.args, true);
  one_wave.splits = plan.splits;
  const double one_wave_ms = harness::time_ms(
      [&] { run<f16, 8>(three.args, one_wave, true, three.workspace, native_stream(nullptr)); });
  std::printf("| batch_norm training%s (three launches, statistics in %lld splits) | %.4f | %.0f%% (three transfers: "
              "%.0f%%) |\n",
              shape, static_cast<long long>(one_wave.splits), one_wave_ms, 100 * copy / one_wave_ms,
              150 * copy / one_wave_ms);
  void* y_three = nullptr;
  harness::cuda(cudaMalloc(&y_three, bytes), "malloc");
  three.args.y = y_three;
  launch_batch_norm(three.args, true, three.workspace, nullptr);
  const std::vector<float> mean_three = download(three.args.batch_mean, kN);
  const std::vector<float> rstd_three = download(three.args.batch_rstd, kN);
  std::vector<std::uint16_t> out_three(bytes / 2), out(bytes / 2);
  harness::cuda(cudaMemcpy(out_three.data(), y_three, bytes, cudaMemcpyDeviceToHost), "download");
  const auto rel = [](float got, float want) { return std::abs(got - want) / std::max(std::abs(want), 1e-6f); };
  for (const int kept : {0, 4, 8, 12, 16, 20, 24}) {
    const BatchNormSingleLaunch form = batch_norm_single_launch(DType::float16, kept);
    if (form.kept_rows != kept) {
      std::printf("| batch_norm training%s (one launch, %d rows kept) | not held: %d blocks keeping none |\n", shape,
                  kept, form.blocks);
      continue;
    }
    BatchNormCase one = bn;
    one.args.single_launch = form;
    harness::cuda(cudaMalloc(&one.workspace, batch_norm_training_workspace_bytes(one.args)), "malloc");
    const double ms = harness::time_ms([&] { launch_batch_norm(one.args, true, one.workspace, nullptr); });
    launch_batch_norm(one.args, true, one.workspace, nullptr);
    const std::vector<float> mean = download(one.args.batch_mean, kN), rstd = download(one.args.batch_rstd, kN);
    harness::cuda(cudaMemcpy(out.data(), one.args.y, bytes, cudaMemcpyDeviceToHost), "download");
    double stats_rel = 0, out_abs = 0;
    for (std::int64_t c = 0; c < kN; ++c) {
      stats_rel = std::max({stats_rel, static_cast<double>(rel(mean[c], mean_three[c])),
                            static_cast<double>(rel(rstd[c], rstd_three[c]))});
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
      out_abs = std::max<double>(out_abs, std::abs(half_bits_to_float(out[i]) - half_bits_to_float(out_three[i])));
    }
    std::printf("| batch_norm training%s (one launch, %d rows kept, %d blocks) | %.4f | %.0f%% (three transfers: "
                "%.0f%%); against three: statistics within %.2e, outputs within %.2e |\n",
                shape, kept, form.blocks, ms, 100 * copy / ms, 150 * copy / ms, stats_rel, out_abs);
    std::fflush(stdout);
    harness::cuda(cudaFree(one.workspace), "free");
  }
  std::printf("\n");
  harness::cuda(cudaFree(y_three), "free");
}

// The row kernels the launchers choose at 4096 columns, on one block per row (or per two) and on
// exactly the device's resident blocks looping over rows, from under two waves to 15.5, each
// against a copy of the same bytes: the figures behind kResidentGridWaves.
void row_grid_forms(void* x, void* y, void* w, void* b) {
  int sm_count = 0;
  harness::cuda(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0), "sm count");
  std::printf("\n| kernel | rows | waves | same-size copy ms | one block a row | resident blocks |\n"
              "| --- | ---: | ---: | ---: | ---: | ---: |\n");
  const auto forms = [&]<class K>(const char* name, const K& k, const auto& launch) {
    const std::int64_t resident = k.resident_blocks(sm_count);
    for (const std::int64_t rows : {2048, 3072, 4096, 6144, 8192, 16384}) {
      const double copy = time_ms([&] {
        harness::cuda(cudaMemcpyAsync(y, x, static_cast<std::size_t>(rows * kN) * 2, cudaMemcpyDeviceToDevice), "copy");
      });
      const std::int64_t blocks = ceil_div(rows, k.rows_per_block);
      const double per_row = time_ms([&] { launch(k, static_cast<unsigned>(blocks), rows); });
      const double looping = time_ms([&] { launch(k, static_cast<unsigned>(resident), rows); });
      std::printf("| %s | %lld | %.2f | %.4f | %.4f (%.0f%%) | %.4f (%.0f%%) |\n", name, static_cast<long long>(rows),
                  static_cast<double>(blocks) / static_cast<double>(resident), copy, per_row, 100 * copy / per_row,
                  looping, 100 * copy / looping);
      std::fflush(stdout);
    }
  };
  const auto norm = [&]<class T>(const RowKernel<RowNormKernelFn<T>>& k, unsigned grid, std::int64_t rows) {
    k.kernel<<<grid, k.threads>>>(static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(b),
                                  static_cast<T*>(y), rows, kN, 1e-5f);
  };
  const auto softmax = [&]<class T>(const RowKernel<SoftmaxRowKernelFn<T>>& k, unsigned grid, std::int64_t rows) {
    k.kernel<<<grid, k.threads>>>(static_cast<const T*>(x), static_cast<T*>(y), rows, kN);
  };
  forms("rms_norm float16", row_norm_kernel<f16, 8, false>(kN), norm);
  forms("layer_norm float16", row_norm_kernel<f16, 8, true>(kN), norm);
  forms("layer_norm bfloat16", row_norm_kernel<bf16, 8, true>(kN), norm);
  forms("softmax float16", softmax_row_kernel<f16, 8>(kN), softmax);
  forms("softmax bfloat16", softmax_row_kernel<bf16, 8>(kN), softmax);
}

// The prefetching softmax at 16384 and 2048 rows, float16 and bfloat16, on the device's resident
// blocks looping over rows, against the launcher's kernel on its own grid and a same-size copy;
// each output's largest difference from the launcher's.
void softmax_prefetch_forms(void* x, void* y) {
  int sm_count = 0;
  harness::cuda(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0), "sm count");
  void* reference = nullptr;
  const std::size_t bytes = static_cast<std::size_t>(kRows * kN) * 2;
  harness::cuda(cudaMalloc(&reference, bytes), "malloc");
  std::printf("\n| softmax | rows | same-size copy ms | launcher ms | prefetched form | ms | largest difference |\n"
              "| --- | ---: | ---: | ---: | --- | ---: | ---: |\n");
  const auto forms = [&]<class T>(const char* dtype, DType dt) {
    const auto* xt = static_cast<const T*>(x);
    for (const std::int64_t rows : {kRows, std::int64_t{2048}}) {
      const std::size_t size = static_cast<std::size_t>(rows * kN) * 2;
      const double copy = time_ms([&] { harness::cuda(cudaMemcpyAsync(y, x, size, cudaMemcpyDeviceToDevice), "copy"); });
      const SoftmaxArgs args{x, reference, rows, kN, 1, dt, softmax_resident_blocks(kN, dt, sm_count)};
      const double launcher = time_ms([&] { launch_softmax(args, nullptr); });
      launch_softmax(args, nullptr);
      std::vector<std::uint16_t> want(size / 2), got(size / 2);
      harness::cuda(cudaMemcpy(want.data(), reference, size, cudaMemcpyDeviceToHost), "download");
      const auto form = [&]<int kPacks>(int threads) {
        int per_sm = 0;
        harness::cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                          &per_sm, harness::softmax_rows_prefetched<T, 8, kPacks>, threads, 0),
                      "occupancy");
        const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>(rows, std::int64_t{per_sm} * sm_count));
        const auto launch = [&] {
          harness::softmax_rows_prefetched<T, 8, kPacks><<<grid, threads>>>(xt, static_cast<T*>(y), rows, kN);
        };
        const double ms = time_ms(launch);
        harness::cuda(cudaMemset(y, 0, size), "clear");
        launch();
        harness::cuda(cudaMemcpy(got.data(), y, size, cudaMemcpyDeviceToHost), "download");
        double worst = 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
          const float a = dt == DType::float16 ? half_bits_to_float(got[i]) : bf16_bits_to_float(got[i]);
          const float b = dt == DType::float16 ? half_bits_to_float(want[i]) : bf16_bits_to_float(want[i]);
          worst = std::max<double>(worst, std::abs(a - b));
        }
        std::printf("| %s | %lld | %.4f | %.4f (%.0f%%) | %d threads of %d packs, %d blocks a multiprocessor | %.4f "
                    "(%.0f%%) | %.2e |\n",
                    dtype, static_cast<long long>(rows), copy, launcher, 100 * copy / launcher, threads, kPacks, per_sm,
                    ms, 100 * copy / ms, worst);
        std::fflush(stdout);
      };
      form.template operator()<2>(256);
      form.template operator()<4>(128);
      form.template operator()<1>(512);
    }
  };
  forms.template operator()<f16>("float16", DType::float16);
  forms.template operator()<bf16>("bfloat16", DType::bfloat16);
  harness::cuda(cudaFree(reference), "free");
}

}  // namespace

int main(int argc, char** argv) {
  const bool profile = argc == 2 && std::string(argv[1]) == "profile";
  if (argc > 2 || (argc == 2 && !profile)) {
    std::fprintf(stderr, "usage: row_ops_harness [profile]\n");
    return 2;
  }
  if (!profile) check_gelu_erf_tail();
  const std::size_t bytes = static_cast<std::size_t>(kRows * kN) * 2;
  void *x = nullptr, *y = nullptr, *w = nullptr, *b = nullptr;
  harness::cuda(cudaMalloc(&x, bytes), "malloc");
  harness::cuda(cudaMalloc(&y, bytes), "malloc");
  harness::cuda(cudaMalloc(&w, kN * 2), "malloc");
  harness::cuda(cudaMalloc(&b, kN * 2), "malloc");
  // float16 0.5 everywhere is 0x3800; 0x3800 0x3c00 alternating gives rows that are not constant.
  std::vector<std::uint16_t> host(static_cast<std::size_t>(kRows * kN));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<std::uint16_t>(0x3800 + (i * 7919 % 2048));
  harness::cuda(cudaMemcpy(x, host.data(), bytes, cudaMemcpyHostToDevice), "upload");
  harness::cuda(cudaMemcpy(w, host.data(), kN * 2, cudaMemcpyHostToDevice), "upload");
  harness::cuda(cudaMemcpy(b, host.data() + kN, kN * 2, cudaMemcpyHostToDevice), "upload");
  cudaMemPool_t pool{};
  harness::cuda(cudaDeviceGetDefaultMemPool(&pool, 0), "pool");
  if (profile) {
    const RowNormArgs norm{x, w, b, y, kRows, kN, 1e-5f, DType::bfloat16};
    launch_gelu({x, y, kRows * kN, DType::bfloat16, false}, nullptr);
    launch_rms_norm(norm, nullptr);
    launch_layer_norm(norm, nullptr);
    launch_layer_norm({x, w, b, y, kRows, kN, 1e-5f, DType::float16}, nullptr);
    launch_softmax({x, y, kRows, kN, 1, DType::bfloat16}, nullptr);
    const BatchNormCase bn = batch_norm_case(x, y, kRows);
    launch_batch_norm(bn.args, false, nullptr, nullptr);
    launch_batch_norm(bn.args, true, bn.workspace, nullptr);
    BatchNormCase keeping_none = bn;
    keeping_none.args.single_launch = batch_norm_single_launch(DType::float16, 0);
    launch_batch_norm(keeping_none.args, true, keeping_none.workspace, nullptr);
    BatchNormCase three = bn;
    three.args.single_launch = {};
    harness::cuda(cudaMalloc(&three.workspace, batch_norm_training_workspace_bytes(three.args)), "malloc");
    launch_batch_norm(three.args, true, three.workspace, nullptr);
    const BatchNormCase mid = batch_norm_case(x, y, 2048);
    launch_batch_norm(mid.args, true, mid.workspace, nullptr);
    harness::cuda(cudaDeviceSynchronize(), "profile launches");
    return 0;
  }

  const double copy = time_ms([&] { harness::cuda(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice), "copy"); });
  std::printf("| kernel | ms | of copy |\n| --- | ---: | ---: |\n| copy 128 MiB | %.4f | 100%% |\n", copy);
  const auto row = [&](const std::string& name, const std::function<void()>& launch) {
    const double ms = time_ms(launch);
    std::printf("| %s | %.4f | %.0f%% |\n", name.c_str(), ms, 100 * copy / ms);
    std::fflush(stdout);
  };
  const auto* xf = static_cast<const f16*>(x);
  auto* yf = static_cast<f16*>(y);
  const auto* wf = static_cast<const f16*>(w);
  const auto* bf = static_cast<const f16*>(b);
  const std::int64_t numel = kRows * kN;

  row("relu", [&] { launch_relu({x, y, numel, DType::float16}, nullptr); });
  row("relu, output from the pool per call", [&] {
    void* out = nullptr;
    harness::cuda(cudaMallocFromPoolAsync(&out, bytes, pool, nullptr), "alloc");
    launch_relu({x, out, numel, DType::float16}, nullptr);
    harness::cuda(cudaFreeAsync(out, nullptr), "free");
  });
  row("relu, a 256-byte pool allocation and free per call beside it", [&] {
    void* other = nullptr;
    harness::cuda(cudaMallocFromPoolAsync(&other, 256, pool, nullptr), "alloc");
    launch_relu({x, y, numel, DType::float16}, nullptr);
    harness::cuda(cudaFreeAsync(other, nullptr), "free");
  });
  row("gelu tanh", [&] { launch_gelu({x, y, numel, DType::float16, true}, nullptr); });
  row("gelu erf", [&] { launch_gelu({x, y, numel, DType::float16, false}, nullptr); });
  row("gelu erf bfloat16", [&] { launch_gelu({x, y, numel, DType::bfloat16, false}, nullptr); });
  row("gelu erf, erff without a left tail (PyTorch's form)", [&] {
    map_kernel<f16, 8, 4, false><<<static_cast<unsigned>(ceil_div(numel / 8, 256 * 4)), 256>>>(
        xf, yf, numel, harness::GeluErfPlain{});
  });

  // The elementwise kernel's shape: threads per block, packs per thread, cache hints; at the full
  // size and at [2048, 4096] (16 MiB, which the L2 partly holds) against a copy of that size.
  for (const std::int64_t count : {numel, numel / 8}) {
    const std::string size = count == numel ? "" : ", 2048 rows";
    const double copy_here = time_ms([&] {
      harness::cuda(cudaMemcpyAsync(y, x, static_cast<std::size_t>(count) * 2, cudaMemcpyDeviceToDevice), "copy");
    });
    const auto relu_shape = [&]<int kPer, bool kStreaming>(int threads) {
      const double ms = time_ms([&] {
        map_kernel<f16, 8, kPer, kStreaming>
            <<<static_cast<unsigned>(ceil_div(count / 8, threads * kPer)), threads>>>(xf, yf, count, ReluOp{});
      });
      std::printf("| relu%s, %d threads, %d packs%s | %.4f | %.0f%% of the same-size copy |\n", size.c_str(),
                  threads, kPer, kStreaming ? ", evict-first" : "", ms, 100 * copy_here / ms);
    };
    relu_shape.template operator()<4, false>(256);
    relu_shape.template operator()<4, true>(256);
    relu_shape.template operator()<2, false>(256);
    relu_shape.template operator()<1, false>(256);
    relu_shape.template operator()<1, false>(128);
    relu_shape.template operator()<2, false>(128);
    relu_shape.template operator()<4, false>(128);
    relu_shape.template operator()<8, false>(128);
    relu_shape.template operator()<4, false>(512);
    relu_shape.template operator()<2, true>(128);
    relu_shape.template operator()<1, true>(128);
    // The erf GELU (float16, and float32 over the same bytes) at the shapes an arithmetic map may take.
    const auto gelu_shape = [&]<class T, int kPer, class F = GeluErfOp>(int threads) {
      constexpr int kVec = kVec16<T>;
      constexpr bool kPlain = std::is_same_v<F, harness::GeluErfPlain>;
      const std::int64_t n = count * 2 / static_cast<std::int64_t>(sizeof(T));
      const double ms = time_ms([&] {
        map_kernel<T, kVec, kPer, false><<<static_cast<unsigned>(ceil_div(n / kVec, threads * kPer)), threads>>>(
            static_cast<const T*>(x), static_cast<T*>(y), n, F{});
      });
      std::printf("| gelu erf %s%s%s, %d threads, %d packs | %.4f | %.0f%% of the same-size copy |\n",
                  sizeof(T) == 4 ? "float32" : "float16", kPlain ? " in PyTorch's form" : "", size.c_str(), threads,
                  kPer, ms, 100 * copy_here / ms);
    };
    gelu_shape.template operator()<f16, 4>(256);
    gelu_shape.template operator()<f16, 2>(256);
    gelu_shape.template operator()<f16, 1>(256);
    gelu_shape.template operator()<f16, 1>(128);
    gelu_shape.template operator()<f16, 2>(128);
    gelu_shape.template operator()<float, 4>(256);
    gelu_shape.template operator()<float, 2>(256);
    gelu_shape.template operator()<float, 1>(256);
    gelu_shape.template operator()<float, 1>(128);
    gelu_shape.template operator()<float, 2>(128);
    gelu_shape.template operator()<float, 1, harness::GeluErfPlain>(128);
    gelu_shape.template operator()<float, 4, harness::GeluErfPlain>(256);
  }

  const RowNormArgs norm{x, w, b, y, kRows, kN, 1e-5f, DType::float16};
  row("rms_norm (launcher)", [&] { launch_rms_norm(norm, nullptr); });
  row("layer_norm (launcher)", [&] { launch_layer_norm(norm, nullptr); });
  RowNormArgs norm_bf16 = norm;
  norm_bf16.dtype = DType::bfloat16;
  row("layer_norm bfloat16 (launcher)", [&] { launch_layer_norm(norm_bf16, nullptr); });
  row("softmax bfloat16 (launcher)", [&] { launch_softmax({x, y, kRows, kN, 1, DType::bfloat16}, nullptr); });
  row("softmax (launcher)", [&] { launch_softmax({x, y, kRows, kN, 1, DType::float16}, nullptr); });

  // Row kernels at other block shapes: packs per thread, rows per block, threads.
  const auto norm_shape = [&]<int kPacks, int kRowsPerBlock, bool kLayerNorm>(int threads) {
    const std::string name = std::string(kLayerNorm ? "layer_norm" : "rms_norm") + " packs " +
                             std::to_string(kPacks) + " rows " + std::to_string(kRowsPerBlock) + " threads " +
                             std::to_string(threads);
    row(name, [&] {
      row_norm_in_registers<f16, 8, kPacks, kRowsPerBlock, kLayerNorm>
          <<<blocks_for(kRows, kRowsPerBlock), threads>>>(xf, wf, kLayerNorm ? bf : nullptr, yf, kRows, kN, 1e-5f);
    });
  };
  for (bool ln : {false, true}) {
    const auto shapes = [&]<bool kLayerNorm>() {
      norm_shape.template operator()<2, 2, kLayerNorm>(256);
      norm_shape.template operator()<2, 1, kLayerNorm>(256);
    };
    if (ln) shapes.template operator()<true>();
    else shapes.template operator()<false>();
  }
  row("softmax packs 2 threads 256", [&] {
    softmax_rows_in_registers<f16, 8, 2><<<blocks_for(kRows, 1), 256>>>(xf, yf, kRows, kN);
  });
  softmax_prefetch_forms(x, y);
  row_grid_forms(x, y, w, b);
  std::printf("\n| kernel | ms | of copy |\n| --- | ---: | ---: |\n");
  // Batch norm over [16384, 4096] as [n, channels]: the output pass at rows per thread, the
  // statistics pass at split counts, then the launcher's whole op.
  std::vector<float> affine_host(static_cast<std::size_t>(kN) * 4);
  for (std::int64_t c = 0; c < kN; ++c) {
    affine_host[static_cast<std::size_t>(c) * 4 + 0] = 0.01f * static_cast<float>(c % 7);
    affine_host[static_cast<std::size_t>(c) * 4 + 1] = 1.0f + 0.001f * static_cast<float>(c % 13);
    affine_host[static_cast<std::size_t>(c) * 4 + 2] = 0.1f;
  }
  void* affine = nullptr;
  harness::cuda(cudaMalloc(&affine, affine_host.size() * 4), "malloc");
  harness::cuda(cudaMemcpy(affine, affine_host.data(), affine_host.size() * 4, cudaMemcpyHostToDevice), "upload");
  const auto* aff = static_cast<const ChannelAffine*>(affine);
  const auto apply_shape = [&]<int kUnroll>(std::int64_t rows_per_thread) {
    const dim3 grid(static_cast<unsigned>(kN / 8 / 256), static_cast<unsigned>(ceil_div(kRows, rows_per_thread)));
    row("batch_norm output pass, " + std::to_string(rows_per_thread) + " rows per thread, " +
            std::to_string(kUnroll) + " in flight",
        [&] {
          apply_channels_last<f16, 8, TrainedAffine, kUnroll>
              <<<grid, 256>>>(xf, yf, kRows, kN, TrainedAffine{aff}, rows_per_thread);
        });
  };
  apply_shape.template operator()<8>(8);
  apply_shape.template operator()<8>(16);
  apply_shape.template operator()<8>(32);
  // The statistics pass at its split counts (the launcher takes 33 at this shape on 132 SMs), then
  // the whole op as the launcher runs it.
  void* partial = nullptr;
  harness::cuda(cudaMalloc(&partial, static_cast<std::size_t>(64) * kN * sizeof(Moments)), "malloc");
  const auto statistics_pass = [&]<int kInFlight>(unsigned splits) {
    const dim3 grid(static_cast<unsigned>(kN / 8 / kChannelLanes), splits);
    const double ms = time_ms([&] {
      moments_channels_last<f16, 8, kInFlight>
          <<<grid, dim3(kChannelLanes, kRowLanes)>>>(xf, static_cast<Moments*>(partial), kRows, kN);
    });
    // A read-only pass: against half the copy's time (which reads and writes the bytes).
    std::printf("| batch_norm statistics pass, %u splits, %d in flight | %.4f | %.0f%% of a read |\n", splits,
                kInFlight, ms, 100 * copy / 2 / ms);
  };
  for (unsigned splits : {16u, 33u, 64u}) statistics_pass.template operator()<8>(splits);
  for (unsigned splits : {16u, 33u}) statistics_pass.template operator()<16>(splits);
  const BatchNormCase bn = batch_norm_case(x, y, kRows);
  row("batch_norm inference (launcher)", [&] { launch_batch_norm(bn.args, false, nullptr, nullptr); });
  batch_norm_training_rows(bn, copy, "");
  // [2048, 4096]: 16 MiB, which the L2 holds, against a copy of the same bytes.
  constexpr std::int64_t kMidRows = 2048;
  const double mid_copy = time_ms([&] {
    harness::cuda(cudaMemcpyAsync(y, x, static_cast<std::size_t>(kMidRows * kN) * 2, cudaMemcpyDeviceToDevice), "copy");
  });
  std::printf("| copy 16 MiB | %.4f | 100%% of it |\n", mid_copy);
  const BatchNormCase mid = batch_norm_case(x, y, kMidRows);
  const dim3 resident_grid(static_cast<unsigned>(kN / 8 / kChannelLanes),
                           static_cast<unsigned>(plan_batch_norm(mid.args, true).splits));
  for (const int barriers : {0, 2}) {
    const double ms = time_ms([&] {
      launch_cooperative(harness::grid_barriers_only, resident_grid, dim3(kChannelLanes, kRowLanes), 0, nullptr,
                         barriers);
    });
    std::printf("| cooperative launch of the single launch's grid, %d grid barriers, no work | %.4f | |\n", barriers,
                ms);
  }
  batch_norm_training_rows(mid, mid_copy, ", [2048, 4096]");
  return 0;
}
