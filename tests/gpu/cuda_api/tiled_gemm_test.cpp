// The shared tiled GEMM (plugins/gpu_common/kernels/tiled_gemm.cu, the hip plugin's GEMM for
// what the dot-rows kernel refuses) run on the CUDA GPU: no cuda kernel type serves it
// (cuBLASLt does), so the tests link the kernel file (tileops_test_tiled_gemm) and call
// launch_tiled_gemm directly on raw device memory. Every dtype and transposition at shapes with
// tails in every extent, both tile sizes, misaligned operands and k = 0, against a double
// loop on the host; its refusals; and its speed at a Llama prefill shape. This runs the FMA
// path only: the MFMA path (AMD matrix cores) needs an AMD GPU.
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "../../../plugins/gpu_common/host/launchers.hpp"
#include "support/gpu.hpp"
#include "tileops/errors.hpp"
#include "tileops/half.hpp"

namespace tileops::gpu {

// What the GPU runtime (plugins/gpu_common/host/gpu_runtime.cpp) defines in the plugins, for
// the kernel file linked here.
void check_launch(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    throw RuntimeError(std::string("cuda: launching kernel ") + kernel + " failed: " + cudaGetErrorName(e));
  }
}

}  // namespace tileops::gpu

using namespace tileops;
using testing::cuda_or_skip;

namespace {

constexpr DType kFloats[] = {DType::float32, DType::float16, DType::bfloat16};

void cuda_ok(cudaError_t e, const char* what) { REQUIRE_MESSAGE(e == cudaSuccess, what << ": " << cudaGetErrorName(e)); }

std::size_t element_size(DType dtype) { return dtype == DType::float32 ? 4 : 2; }

// A host matrix of `count` elements of `dtype` from uniform values in [-1, 1], with the values
// the elements hold (after rounding to dtype) in double.
struct HostMatrix {
  std::vector<unsigned char> bytes;
  std::vector<double> values;
};

HostMatrix random_matrix(std::int64_t count, DType dtype, unsigned seed) {
  HostMatrix h;
  h.bytes.resize(static_cast<std::size_t>(count) * element_size(dtype));
  h.values.resize(static_cast<std::size_t>(count));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (std::size_t i = 0; i < h.values.size(); ++i) {
    const float v = dist(gen);
    if (dtype == DType::float32) {
      std::memcpy(&h.bytes[i * 4], &v, 4);
      h.values[i] = v;
    } else {
      const std::uint16_t bits = dtype == DType::float16 ? Half::from_float(v) : BFloat16::from_float(v);
      std::memcpy(&h.bytes[i * 2], &bits, 2);
      h.values[i] = dtype == DType::float16 ? Half::to_float(bits) : BFloat16::to_float(bits);
    }
  }
  return h;
}

double value_at(const std::vector<unsigned char>& bytes, std::size_t i, DType dtype) {
  if (dtype == DType::float32) {
    float v;
    std::memcpy(&v, &bytes[i * 4], 4);
    return v;
  }
  std::uint16_t bits;
  std::memcpy(&bits, &bytes[i * 2], 2);
  return dtype == DType::float16 ? Half::to_float(bits) : BFloat16::to_float(bits);
}

// Device memory holding `bytes`, starting `offset` bytes into its allocation (an odd offset
// misaligns the operand).
struct DeviceBuffer {
  void* base = nullptr;
  void* data = nullptr;
  DeviceBuffer(std::size_t size, std::size_t offset) {
    cuda_ok(cudaMalloc(&base, size + offset + 1), "cudaMalloc");
    data = static_cast<unsigned char*>(base) + offset;
  }
  ~DeviceBuffer() { cudaFree(base); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct Case {
  std::int64_t m, n, k;
  bool trans_a, trans_b;
  DType dtype;
  std::string str() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + (trans_a ? " ta" : "") +
           (trans_b ? " tb" : "") + " " + std::string(dtype_name(dtype));
  }
};

// Operand element (i, p) of op(a) and (p, j) of op(b) in their stored layouts.
std::size_t a_index(const Case& c, std::int64_t i, std::int64_t p) {
  return static_cast<std::size_t>(c.trans_a ? p * c.m + i : i * c.k + p);
}
std::size_t b_index(const Case& c, std::int64_t p, std::int64_t j) {
  return static_cast<std::size_t>(c.trans_b ? j * c.k + p : p * c.n + j);
}

// Whether d(i, j) is within what float32 accumulation and rounding to dtype allow of the
// double sum: k * 2^-23 of the sum of the products' magnitudes, plus half a unit in the last
// place of dtype (at least half its subnormals' spacing: small sums of float16 round to those).
bool close(double got, double want, double magnitude, std::int64_t k, DType dtype) {
  const double out_eps = dtype == DType::float32 ? 0x1p-24 : dtype == DType::float16 ? 0x1p-11 : 0x1p-8;
  const double out_min = dtype == DType::float32 ? 0x1p-150 : dtype == DType::float16 ? 0x1p-25 : 0x1p-134;
  const double tol = static_cast<double>(k) * 0x1p-23 * magnitude + std::max(std::abs(want) * out_eps, out_min);
  return std::abs(got - want) <= tol;
}

// Runs the case on the GPU (sm_count picks the tile size; byte offset `misalign` for every
// operand) and compares every element of d, or `samples` random elements when nonzero, with
// a double loop on the host. Returns the kernel's time in seconds when `timed`.
double check_case(const Case& c, int sm_count, std::size_t misalign = 0, int samples = 0, bool timed = false) {
  CAPTURE(c.str());
  CAPTURE(sm_count);
  CAPTURE(misalign);
  const HostMatrix a = random_matrix(c.m * c.k, c.dtype, 1);
  const HostMatrix b = random_matrix(c.k * c.n, c.dtype, 2);
  const std::size_t d_bytes = static_cast<std::size_t>(c.m * c.n) * element_size(c.dtype);
  DeviceBuffer da(a.bytes.size(), misalign), db(b.bytes.size(), misalign), dd(d_bytes, misalign);
  cuda_ok(cudaMemcpy(da.data, a.bytes.data(), a.bytes.size(), cudaMemcpyHostToDevice), "copy a");
  cuda_ok(cudaMemcpy(db.data, b.bytes.data(), b.bytes.size(), cudaMemcpyHostToDevice), "copy b");
  cuda_ok(cudaMemset(dd.data, 0xff, d_bytes), "fill d with NaN");  // every element must be written
  const gpu::TiledGemmArgs args{da.data, db.data, dd.data, c.m, c.n, c.k, c.trans_a, c.trans_b, c.dtype, sm_count};
  gpu::launch_tiled_gemm(args, nullptr);
  cuda_ok(cudaDeviceSynchronize(), "the first run");
  double seconds = 0;
  if (timed) {
    constexpr int kRuns = 5;
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < kRuns; ++r) gpu::launch_tiled_gemm(args, nullptr);
    cuda_ok(cudaDeviceSynchronize(), "the timed runs");
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / kRuns;
  }
  std::vector<unsigned char> d(d_bytes);
  cuda_ok(cudaMemcpy(d.data(), dd.data, d_bytes, cudaMemcpyDeviceToHost), "copy d");

  const auto check_at = [&](std::int64_t i, std::int64_t j) {
    double sum = 0, magnitude = 0;
    for (std::int64_t p = 0; p < c.k; ++p) {
      const double prod = a.values[a_index(c, i, p)] * b.values[b_index(c, p, j)];
      sum += prod;
      magnitude += std::abs(prod);
    }
    const double got = value_at(d, static_cast<std::size_t>(i * c.n + j), c.dtype);
    return close(got, sum, magnitude, c.k, c.dtype);
  };
  std::int64_t wrong = 0, first_i = -1, first_j = -1;
  const auto record = [&](std::int64_t i, std::int64_t j) {
    if (check_at(i, j)) return;
    if (wrong++ == 0) {
      first_i = i;
      first_j = j;
    }
  };
  if (samples > 0) {
    std::mt19937_64 gen(3);
    for (int s = 0; s < samples; ++s) record(static_cast<std::int64_t>(gen() % c.m), static_cast<std::int64_t>(gen() % c.n));
  } else {
    for (std::int64_t i = 0; i < c.m; ++i) {
      for (std::int64_t j = 0; j < c.n; ++j) record(i, j);
    }
  }
  CHECK_MESSAGE(wrong == 0, wrong << " elements out of tolerance, the first at (" << first_i << ", " << first_j << ")");
  return seconds;
}

int sm_count() {
  int count = 0;
  cuda_ok(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, 0), "multiprocessor count");
  return count;
}

}  // namespace

TEST_CASE("GPU: the tiled GEMM matches a double loop for every dtype, transposition and tail, at both tile sizes") {
  if (cuda_or_skip() == nullptr) return;
  const int sms = sm_count();
  for (DType dt : kFloats) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (auto [m, n, k] : {std::array<std::int64_t, 3>{1, 1, 1}, {7, 13, 5}, {1, 300, 70}, {300, 1, 70}, {64, 64, 1},
                               {129, 65, 33}, {128, 128, 16}, {200, 257, 300}}) {
          // sm_count 1: 128 x 128 tiles wherever one fills the "device"; the device's own
          // count: 64 x 64 tiles at these sizes.
          for (int sm : {1, sms}) check_case({m, n, k, ta, tb, dt}, sm);
        }
      }
    }
  }
}

TEST_CASE("GPU: the tiled GEMM at 256 x 4096 x 4096, and with every operand one byte or element off alignment") {
  if (cuda_or_skip() == nullptr) return;
  const int sms = sm_count();
  for (DType dt : kFloats) {
    check_case({256, 4096, 4096, false, true, dt}, sms);
    check_case({256, 4096, 4096, true, false, dt}, sms, 0, 4096);
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) check_case({67, 45, 23, ta, tb, dt}, sms, element_size(dt));
    }
  }
}

TEST_CASE("GPU: the tiled GEMM writes zeros for k = 0 and launches nothing for m = 0 or n = 0") {
  if (cuda_or_skip() == nullptr) return;
  for (DType dt : kFloats) {
    check_case({5, 9, 0, false, true, dt}, 1);
    check_case({130, 70, 0, true, false, dt}, 1);
    // Null operands: nothing may be read or written.
    CHECK_NOTHROW(gpu::launch_tiled_gemm({nullptr, nullptr, nullptr, 0, 9, 4, false, true, dt, 1}, nullptr));
    CHECK_NOTHROW(gpu::launch_tiled_gemm({nullptr, nullptr, nullptr, 9, 0, 4, true, false, dt, 1}, nullptr));
    cuda_ok(cudaDeviceSynchronize(), "after the empty calls");
  }
}

TEST_CASE("the tiled GEMM refuses negative extents and operands whose offsets would overflow, launching nothing") {
  using gpu::tiled_gemm_extent_refusal;
  CHECK_FALSE(tiled_gemm_extent_refusal(2048, 14336, 4096).has_value());
  CHECK_FALSE(tiled_gemm_extent_refusal(0, 0, 0).has_value());
  CHECK_FALSE(tiled_gemm_extent_refusal(std::int64_t{1} << 30, 1 << 29, 1).has_value());
  CHECK(tiled_gemm_extent_refusal(-1, 4, 4) == std::optional<std::string>("negative extent: m = -1, n = 4, k = 4"));
  CHECK(tiled_gemm_extent_refusal(std::int64_t{1} << 31, 4, std::int64_t{1} << 29) ==
        std::optional<std::string>("an operand of 2^60 or more elements at m = 2147483648, n = 4, k = 536870912 "
                                   "overflows the kernel's 64-bit offsets"));
  CHECK(tiled_gemm_extent_refusal(std::int64_t{1} << 60, 0, 0).has_value());
  CHECK(tiled_gemm_extent_refusal(3, std::int64_t{1} << 40, std::int64_t{1} << 40).has_value());
  CHECK_THROWS_WITH_AS(
      gpu::launch_tiled_gemm({nullptr, nullptr, nullptr, 4, -2, 4, false, true, DType::float16, 1}, nullptr),
      "gpu kernel tiled_gemm: negative extent: m = 4, n = -2, k = 4", ValueError);
  CHECK_THROWS_WITH_AS(gpu::launch_tiled_gemm({nullptr, nullptr, nullptr, std::int64_t{1} << 40, std::int64_t{1} << 40,
                                               1, false, true, DType::float16, 1},
                                              nullptr),
                       doctest::Contains("overflows the kernel's 64-bit offsets"), ValueError);
}

TEST_CASE("GPU: the tiled GEMM's speed at the Llama-3.1-8B gate/up prefill shape, float16 (a lower bound)") {
  if (cuda_or_skip() == nullptr) return;
  const Case c{2048, 14336, 4096, false, true, DType::float16};
  // 256 sampled elements against the host: the whole product is 1.2e11 multiply-adds.
  const double seconds = check_case(c, sm_count(), 0, 256, true);
  const double gflops = 2.0 * static_cast<double>(c.m) * c.n * c.k / seconds * 1e-9;
  // Host-timed over five back-to-back launches on the default stream, launch overhead
  // included: a lower bound of the kernel's own rate.
  std::cout << "tiled_gemm " << c.str() << ": " << seconds * 1e3 << " ms per call, at least " << gflops
            << " GFLOP/s (FMA path)\n";
  CHECK(gflops > 0);
}
