// Rotary position embedding, rotate-half or interleaved, over BSHD or BHSD rows. One thread per
// (batch, sequence index, pair i) computes the angle once and rotates that pair in every head.
// The angle is formed in double and reduced by a multiple of 2 pi before a float sincos, so
// that positions in the hundred thousands keep the accuracy of the reference, which rotates in
// double.
#include "../host/launchers.hpp"
#include "launch.cuh"

namespace tileops::gpu {
namespace {

constexpr int kThreads = 256;
constexpr double kTwoPi = 6.283185307179586476925286766559;
constexpr double kInverseTwoPi = 0.15915494309189533576888376337251;

// choice = whether the largest of n positions + 1 exceeds long_after: one block.
__global__ void pick_factors(const std::int64_t* __restrict__ positions, std::int64_t n, std::int64_t long_after,
                             std::int32_t* choice) {
  __shared__ int any_beyond;
  if (threadIdx.x == 0) any_beyond = 0;
  __syncthreads();
  bool beyond = false;
  for (std::int64_t s = threadIdx.x; s < n; s += blockDim.x) beyond = beyond || positions[s] + 1 > long_after;
  if (beyond) atomicOr(&any_beyond, 1);
  __syncthreads();
  if (threadIdx.x == 0) *choice = any_beyond;
}

template <class T>
__global__ void rope_kernel(RopeArgs a) {
  const T* __restrict__ x = static_cast<const T*>(a.x);
  T* __restrict__ y = static_cast<T*>(a.y);
  const float* __restrict__ factors = a.long_factors != nullptr && *a.choice != 0 ? a.long_factors : a.factors;
  const std::int64_t d = 2 * a.half;
  const std::int64_t first_stride = a.interleaved ? 2 : 1;
  const std::int64_t second_offset = a.interleaved ? 1 : a.half;
  const std::int64_t sequences = a.rows / a.heads;  // B * S
  // Heads lie d apart in BSHD rows and S * d apart in BHSD ones.
  const std::int64_t head_stride = a.heads_first ? a.seq * d : d;
  for (std::int64_t k = global_thread(); k < sequences * a.half; k += grid_threads()) {
    const std::int64_t bs = k / a.half;
    const std::int64_t i = k - bs * a.half;
    const std::int64_t b = bs / a.seq;
    const std::int64_t s = bs - b * a.seq;
    const double p = static_cast<double>(a.positions != nullptr ? a.positions[s] : s);
    double inv_freq = exp2(-static_cast<double>(2 * i) / static_cast<double>(d) * a.log2_theta);
    if (factors != nullptr) inv_freq /= static_cast<double>(factors[i]);
    const double angle = p * inv_freq;
    float sn, c;
    sincosf(static_cast<float>(fma(-rint(angle * kInverseTwoPi), kTwoPi, angle)), &sn, &c);
    c *= static_cast<float>(a.scale);
    sn *= static_cast<float>(a.scale);
    const std::int64_t first_row = a.heads_first ? b * a.heads * a.seq + s : bs * a.heads;
    std::int64_t first = first_row * d + i * first_stride;
    for (std::int64_t h = 0; h < a.heads; ++h, first += head_stride) {
      const std::int64_t second = first + second_offset;
      const float x1 = to_float(x[first]);
      const float x2 = to_float(x[second]);
      y[first] = store_as<T>(x1 * c - x2 * sn);
      y[second] = store_as<T>(x2 * c + x1 * sn);
    }
  }
}

}  // namespace

void launch_rope(const RopeArgs& a, void* stream) {
  if (a.rows == 0 || a.half == 0) return;
  const NativeStream s = native_stream(stream);
  if (a.long_factors != nullptr) {
    if (a.positions == nullptr || a.choice == nullptr) {
      throw ValueError("gpu kernel rope picks long factors on the device only from positions, with a choice buffer");
    }
    pick_factors<<<1, 1024, 0, s>>>(a.positions, a.seq, a.long_after, a.choice);
  }
  with_float_type(a.dtype, "rope", [&](auto tag) {
    using T = decltype(tag);
    rope_kernel<T><<<blocks_for(a.rows / a.heads * a.half, kThreads), kThreads, 0, s>>>(a);
  });
  check_launch("rope");
}

}  // namespace tileops::gpu
