// The floor under any op's host time on this machine: launching an empty kernel on the
// default stream, with nothing else around it.
#include <cuda_runtime.h>

#include <chrono>

namespace {

__global__ void empty_kernel() {}

}  // namespace

// Host microseconds per launch over `launches` back-to-back launches.
double empty_launch_us(int launches) {
  empty_kernel<<<1, 64>>>();
  cudaDeviceSynchronize();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < launches; ++i) empty_kernel<<<1, 64>>>();
  const auto end = std::chrono::steady_clock::now();
  cudaDeviceSynchronize();
  return std::chrono::duration<double, std::micro>(end - start).count() / launches;
}
