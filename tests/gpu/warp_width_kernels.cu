#include "warp_width_kernels.hpp"

#include <string>

#include "../../plugins/gpu_common/device/portability.hpp"
#include "tileops/errors.hpp"

namespace tileops::testing {
namespace {

constexpr int kMaxThreads = 256;

struct Outputs {
  float* sum;
  float* max;
  int* reversed;
  int* last_lane;
  float* block_sum;
};

template <int kWidth>
__global__ void warp_helpers_kernel(const float* values, Outputs out) {
  __shared__ float scratch[gpu::kMaxWarps];
  const int t = static_cast<int>(threadIdx.x);
  const float v = values[t];
  out.sum[t] = gpu::warp_reduce<kWidth>(v, gpu::Add{});
  out.max[t] = gpu::warp_reduce<kWidth>(v, gpu::Max{});
  out.reversed[t] = gpu::shuffle_xor<kWidth>(t, kWidth - 1);
  out.last_lane[t] = gpu::shuffle_from<kWidth>(t, kWidth - 1);
  out.block_sum[t] = gpu::block_reduce<kWidth>(v, gpu::Add{}, 0.f, scratch);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw RuntimeError(std::string("warp helper test: ") + what + ": " + cudaGetErrorString(e));
}

template <class T>
std::vector<T> read_back(const T* device, std::size_t n) {
  std::vector<T> host(n);
  check(cudaMemcpy(host.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost), "copying the results back");
  return host;
}

}  // namespace

WarpHelperResults run_warp_helpers(int width, const std::vector<float>& values) {
  const std::size_t n = values.size();
  if (width != 32 && width != 16) throw ValueError("warp helper test: width " + std::to_string(width) + ", not 32 or 16");
  if (n == 0 || n % 32 != 0 || n > kMaxThreads) {
    throw ValueError("warp helper test: " + std::to_string(n) + " threads, not a multiple of 32 up to 256");
  }
  float* in = nullptr;
  Outputs out{};
  check(cudaMalloc(&in, n * sizeof(float)), "allocating the values");
  check(cudaMalloc(&out.sum, n * sizeof(float)), "allocating the sums");
  check(cudaMalloc(&out.max, n * sizeof(float)), "allocating the maxima");
  check(cudaMalloc(&out.reversed, n * sizeof(int)), "allocating the mirror lanes");
  check(cudaMalloc(&out.last_lane, n * sizeof(int)), "allocating the last lanes");
  check(cudaMalloc(&out.block_sum, n * sizeof(float)), "allocating the block sums");
  check(cudaMemcpy(in, values.data(), n * sizeof(float), cudaMemcpyHostToDevice), "copying the values");
  const auto threads = static_cast<unsigned>(n);
  if (width == 32) warp_helpers_kernel<32><<<1, threads>>>(in, out);
  else warp_helpers_kernel<16><<<1, threads>>>(in, out);
  check(cudaGetLastError(), "launching the kernel");
  check(cudaDeviceSynchronize(), "running the kernel");
  WarpHelperResults r{read_back(out.sum, n), read_back(out.max, n), read_back(out.reversed, n),
                      read_back(out.last_lane, n), read_back(out.block_sum, n)};
  for (void* p : {static_cast<void*>(in), static_cast<void*>(out.sum), static_cast<void*>(out.max),
                  static_cast<void*>(out.reversed), static_cast<void*>(out.last_lane),
                  static_cast<void*>(out.block_sum)}) {
    check(cudaFree(p), "freeing the buffers");
  }
  return r;
}

}  // namespace tileops::testing
