// Rotary position embedding, rotate-half or interleaved, over BSHD or BHSD rows: one thread per
// (row, i < D/2) pair. The angle is taken in double and reduced to [-pi, pi] before a float
// sincos, so that positions in the thousands keep the accuracy of the reference, which rotates
// in double.
#include "../host/launchers.hpp"
#include "launch.cuh"

namespace tileops::gpu {
namespace {

constexpr int kThreads = 256;
constexpr double kTwoPi = 6.283185307179586476925286766559;

template <class T>
__global__ void rope_kernel(const T* __restrict__ x, const std::int64_t* __restrict__ positions,
                            const float* __restrict__ factors, T* __restrict__ y, std::int64_t rows, std::int64_t seq,
                            std::int64_t heads, std::int64_t half, bool heads_first, bool interleaved,
                            double log2_theta, float scale) {
  const std::int64_t d = 2 * half;
  const std::int64_t first_stride = interleaved ? 2 : 1;
  const std::int64_t second_offset = interleaved ? 1 : half;
  for (std::int64_t k = global_thread(); k < rows * half; k += grid_threads()) {
    const std::int64_t row = k / half;
    const std::int64_t i = k - row * half;
    const std::int64_t s = heads_first ? row % seq : (row / heads) % seq;
    const double p = static_cast<double>(positions != nullptr ? positions[s] : s);
    double inv_freq = exp2(-static_cast<double>(2 * i) / static_cast<double>(d) * log2_theta);
    if (factors != nullptr) inv_freq /= static_cast<double>(factors[i]);
    float sn, c;
    sincosf(static_cast<float>(remainder(p * inv_freq, kTwoPi)), &sn, &c);
    c *= scale;
    sn *= scale;
    const std::int64_t first = row * d + i * first_stride;
    const std::int64_t second = first + second_offset;
    const float x1 = to_float(x[first]);
    const float x2 = to_float(x[second]);
    y[first] = store_as<T>(x1 * c - x2 * sn);
    y[second] = store_as<T>(x2 * c + x1 * sn);
  }
}

}  // namespace

void launch_rope(const RopeArgs& a, void* stream) {
  if (a.rows == 0 || a.half == 0) return;
  with_float_type(a.dtype, "rope", [&](auto tag) {
    using T = decltype(tag);
    rope_kernel<T><<<blocks_for(a.rows * a.half, kThreads), kThreads, 0, native_stream(stream)>>>(
        static_cast<const T*>(a.x), a.positions, a.factors, static_cast<T*>(a.y), a.rows, a.seq, a.heads, a.half,
        a.heads_first, a.interleaved, a.log2_theta, static_cast<float>(a.scale));
  });
  check_launch("rope");
}

}  // namespace tileops::gpu
