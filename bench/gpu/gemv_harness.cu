// A standalone timing of the decode products (dot_rows.cu compiled in, no plugin): a few rows of
// a against Llama-3.1-8B's weight matrices stored [n, k], float16 and bfloat16, by the launcher
// as it chooses, by the one-warp-a-row kernel and by each block shape of the block kernel,
// against a device copy of the weight bytes timed the same way. Each output is checked against a double-precision product over a
// sample of the rows of b. The figures behind the launcher's choice between its two kernels.
// Built as bench/gpu/gemv_harness by the CUDA build.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "../../plugins/gpu_common/kernels/dot_rows.cu"

#include "harness_library.hpp"
#include "harness_timing.hpp"

namespace {

using namespace tileops::gpu;
using tileops::DType;

using harness::cuda;
using harness::time_ms;

std::uint16_t to_bits(float f, DType dtype) {
  if (dtype == DType::float16) return __half_raw(__float2half_rn(f)).x;
  return __nv_bfloat16_raw(__float2bfloat16_rn(f)).x;
}

float from_bits(std::uint16_t h, DType dtype) {
  if (dtype == DType::float16) {
    __half_raw r;
    r.x = h;
    return __half2float(__half(r));
  }
  __nv_bfloat16_raw r;
  r.x = h;
  return __bfloat162float(__nv_bfloat16(r));
}

struct Shape {
  const char* name;
  std::int64_t n, k;
};

template <int kRows, int kCols, int kBlock, int kUnroll, class T>
void launch_block(const T* a, const T* b, T* d, int m, std::int64_t n, std::int64_t k) {
  dot_rows_block_kernel<T, kVec16<T>, kRows, kCols, kBlock, kUnroll>
      <<<blocks_for(n, kCols), kBlock>>>(a, b, d, m, n, k);
}

// The block shapes tried: rows of b per block, threads, packs of each row in flight.
template <int kRows, class T>
std::vector<std::pair<std::string, std::function<void(const T*, const T*, T*, int, std::int64_t, std::int64_t)>>>
block_variants() {
  return {
      {"block c1 t64 u8", launch_block<kRows, 1, 64, 8, T>},
      {"block c1 t128 u4", launch_block<kRows, 1, 128, 4, T>},
      {"block c1 t128 u8", launch_block<kRows, 1, 128, 8, T>},
      {"block c2 t128 u4", launch_block<kRows, 2, 128, 4, T>},
      {"block c4 t128 u2", launch_block<kRows, 4, 128, 2, T>},
      {"block c1 t256 u4", launch_block<kRows, 1, 256, 4, T>},
      {"block c2 t256 u4", launch_block<kRows, 2, 256, 4, T>},
      {"block c1 t512 u2", launch_block<kRows, 1, 512, 2, T>},
  };
}

template <class T>
void run(DType dtype, const Shape& shape, int m, int sm_count, double copy_rate) {
  const std::int64_t n = shape.n, k = shape.k;
  const std::size_t b_bytes = static_cast<std::size_t>(n * k) * 2;
  const int copies = static_cast<int>(std::clamp<std::size_t>((std::size_t{512} << 20) / b_bytes, 1, 8));
  std::vector<std::uint16_t> host_b(static_cast<std::size_t>(n * k)), host_a(static_cast<std::size_t>(m * k));
  std::uint32_t state = 12345;
  const auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) / 16777216.0f * 2.0f - 1.0f;
  };
  for (auto& v : host_b) v = to_bits(next(), dtype);
  for (auto& v : host_a) v = to_bits(next(), dtype);
  std::vector<void*> bs(copies);
  for (auto& p : bs) {
    cuda(cudaMalloc(&p, b_bytes), "malloc");
    cuda(cudaMemcpy(p, host_b.data(), b_bytes, cudaMemcpyHostToDevice), "upload");
  }
  void *a = nullptr, *d = nullptr, *copy_to = nullptr;
  cuda(cudaMalloc(&a, host_a.size() * 2), "malloc");
  cuda(cudaMalloc(&d, static_cast<std::size_t>(m * n) * 2), "malloc");
  cuda(cudaMalloc(&copy_to, b_bytes), "malloc");
  cuda(cudaMemcpy(a, host_a.data(), host_a.size() * 2, cudaMemcpyHostToDevice), "upload");

  // Sampled rows of b: the double-precision products and the largest |sum| of |terms| as scale.
  std::vector<std::int64_t> sample;
  for (std::int64_t j = 0; j < n; j += 37) sample.push_back(j);
  sample.push_back(n - 1);
  std::vector<double> expect(sample.size() * m), scale(sample.size() * m);
  for (std::size_t s = 0; s < sample.size(); ++s) {
    for (int r = 0; r < m; ++r) {
      double sum = 0, abs_sum = 0;
      for (std::int64_t p = 0; p < k; ++p) {
        const double t = static_cast<double>(from_bits(host_a[r * k + p], dtype)) *
                         from_bits(host_b[sample[s] * k + p], dtype);
        sum += t;
        abs_sum += std::abs(t);
      }
      expect[s * m + r] = sum;
      scale[s * m + r] = abs_sum;
    }
  }
  const auto worst_error = [&] {
    std::vector<std::uint16_t> out(static_cast<std::size_t>(m * n));
    cuda(cudaMemcpy(out.data(), d, out.size() * 2, cudaMemcpyDeviceToHost), "download");
    double worst = 0;
    for (std::size_t s = 0; s < sample.size(); ++s) {
      for (int r = 0; r < m; ++r) {
        const double got = from_bits(out[r * n + sample[s]], dtype);
        worst = std::max(worst, std::abs(got - expect[s * m + r]) / std::max(scale[s * m + r], 1e-30));
      }
    }
    return worst;
  };

  const double copy = time_ms([&](int i) {
    cuda(cudaMemcpyAsync(copy_to, bs[i % copies], b_bytes, cudaMemcpyDeviceToDevice), "copy");
  });
  const auto row = [&](const std::string& name, const std::function<void(int)>& launch) {
    cuda(cudaMemset(d, 0xff, static_cast<std::size_t>(m * n) * 2), "memset");
    launch(0);
    cuda(cudaDeviceSynchronize(), name.c_str());
    const double error = worst_error();
    const double ms = time_ms(launch);
    const double rate = static_cast<double>(b_bytes) / ms / 1e6;
    std::printf("| %s | %s | %d | %s | %.4f | %.0f | %.0f%% | %.0f%% | %.1e%s |\n", shape.name,
                dtype == DType::float16 ? "float16" : "bfloat16", m, name.c_str(), ms, rate, 100 * rate / copy_rate,
                100 * copy / ms, error, error > 1e-2 ? " FAIL" : "");
  };
  row("launcher", [&](int i) {
    launch_dot_rows({a, bs[i % copies], d, m, n, k, dtype, sm_count, 32}, nullptr);
  });
  const auto variants = [&]<int kRows>() {
    row("warp (one warp a row)", [&](int i) {
      launch_rows<T, kVec16<T>, kRows>({a, bs[i % copies], d, m, n, k, dtype, sm_count, 32}, nullptr);
    });
    for (const auto& [name, launch] : block_variants<kRows, T>()) {
      row(name, [&](int i) {
        launch(static_cast<const T*>(a), static_cast<const T*>(bs[i % copies]), static_cast<T*>(d), m, n, k);
      });
    }
  };
  if (m <= 1) variants.template operator()<1>();
  else if (m <= 4) variants.template operator()<4>();
  else variants.template operator()<8>();
  for (void* p : bs) cudaFree(p);
  cudaFree(a);
  cudaFree(d);
  cudaFree(copy_to);
}

}  // namespace

int main() {
  int sm_count = 0;
  cuda(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0), "attribute");
  const std::size_t big = std::size_t{1} << 31;
  void *x = nullptr, *y = nullptr;
  cuda(cudaMalloc(&x, big), "malloc");
  cuda(cudaMalloc(&y, big), "malloc");
  const double big_copy = time_ms([&](int) { cuda(cudaMemcpyAsync(y, x, big, cudaMemcpyDeviceToDevice), "copy"); });
  cudaFree(x);
  cudaFree(y);
  const double copy_rate = 2.0 * static_cast<double>(big) / big_copy / 1e6;  // bytes read + written
  std::printf("2 GiB copy: %.0f GB/s (read + written); %d multiprocessors\n\n", copy_rate, sm_count);
  std::printf("GB/s counts the bytes of b once; 'of copy' is against the 2 GiB copy's rate, 'vs same copy' is the\n"
              "time of a device copy of b's bytes over the kernel's; error is the worst |d - exact| / sum |terms|.\n\n");
  std::printf("| n x k | dtype | m | kernel | ms | GB/s | of copy | vs same copy | error |\n");
  std::printf("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |\n");
  const Shape shapes[] = {{"4096x14336 (down)", 4096, 14336},
                          {"28672x4096 (gate+up)", 28672, 4096},
                          {"6144x4096 (qkv)", 6144, 4096},
                          {"4096x4096 (o)", 4096, 4096}};
  for (const Shape& shape : shapes) {
    for (const int m : {1, 4, 8}) {
      run<bf16>(DType::bfloat16, shape, m, sm_count, copy_rate);
      if (m == 1) run<f16>(DType::float16, shape, m, sm_count, copy_rate);
    }
  }
}
