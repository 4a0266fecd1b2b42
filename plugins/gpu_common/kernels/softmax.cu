// Softmax. Over the last axis, a row that fits in one block's registers is read once (max,
// sum of exponentials, output from registers); a longer row takes one online pass (running
// max and rescaled sum per thread) and one output pass. Over an inner axis (inner > 1), each
// thread owns one column and makes the same two passes down it, reads coalesced across the
// columns.
#include "../host/launchers.hpp"
#include "launch.cuh"

namespace tileops::gpu {
namespace {

constexpr int kRegisterFloats = 16;
constexpr float kNegInf = -__builtin_huge_valf();

// A running maximum and the sum of exp(x - maximum) of the values seen so far.
struct Online {
  float max = kNegInf;
  float sum = 0.0f;
  __device__ void add(float v) {
    if (v > max) {
      sum = sum * __expf(max - v) + 1.0f;
      max = v;
    } else if (v != kNegInf) {  // exp(-inf) adds nothing; against a maximum of -inf it would be NaN
      sum += __expf(v - max);
    }
  }
};

// Combines per-thread Online states across the block: the block maximum, then the sum of each
// thread's sum rescaled to it.
__device__ __forceinline__ Online block_online(Online mine, float* scratch) {
  Online all;
  all.max = block_reduce(mine.max, Max{}, kNegInf, scratch);
  const float rescaled = mine.sum == 0.0f ? 0.0f : mine.sum * __expf(mine.max - all.max);
  all.sum = block_reduce(rescaled, Add{}, 0.0f, scratch);
  return all;
}

template <class T, int kVec, int kPacks>
__global__ void __launch_bounds__(1024)
    softmax_rows_in_registers(const T* __restrict__ x, T* __restrict__ y, std::int64_t rows, std::int64_t n) {
  __shared__ float scratch[kMaxWarps];
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * n;
    T* yr = y + row * n;
    float v[kPacks][kVec];
    float local_max = kNegInf;
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const std::int64_t e = (static_cast<std::int64_t>(p) * blockDim.x + threadIdx.x) * kVec;
      if (e < n) {
        const Pack<T, kVec> in = load_pack<kVec>(xr + e);
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          v[p][k] = to_float(in.v[k]);
          local_max = fmaxf(local_max, v[p][k]);
        }
      }
    }
    const float row_max = block_reduce(local_max, Max{}, kNegInf, scratch);
    float local_sum = 0.0f;
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const std::int64_t e = (static_cast<std::int64_t>(p) * blockDim.x + threadIdx.x) * kVec;
      if (e < n) {
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          v[p][k] = __expf(v[p][k] - row_max);
          local_sum += v[p][k];
        }
      }
    }
    const float inv_sum = 1.0f / block_reduce(local_sum, Add{}, 0.0f, scratch);
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const std::int64_t e = (static_cast<std::int64_t>(p) * blockDim.x + threadIdx.x) * kVec;
      if (e < n) {
        Pack<T, kVec> out;
#pragma unroll
        for (int k = 0; k < kVec; ++k) out.v[k] = store_as<T>(v[p][k] * inv_sum);
        store_pack(yr + e, out);
      }
    }
  }
}

template <class T, int kVec>
__global__ void __launch_bounds__(1024)
    softmax_rows_streamed(const T* __restrict__ x, T* __restrict__ y, std::int64_t rows, std::int64_t n) {
  __shared__ float scratch[kMaxWarps];
  const std::int64_t step = static_cast<std::int64_t>(blockDim.x) * kVec;
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * n;
    T* yr = y + row * n;
    Online mine;
    for (std::int64_t e = threadIdx.x * kVec; e < n; e += step) {
      const Pack<T, kVec> in = load_pack<kVec>(xr + e);
#pragma unroll
      for (int k = 0; k < kVec; ++k) mine.add(to_float(in.v[k]));
    }
    const Online all = block_online(mine, scratch);
    const float inv_sum = 1.0f / all.sum;
    for (std::int64_t e = threadIdx.x * kVec; e < n; e += step) {
      const Pack<T, kVec> in = load_pack<kVec>(xr + e);
      Pack<T, kVec> out;
#pragma unroll
      for (int k = 0; k < kVec; ++k) out.v[k] = store_as<T>(__expf(to_float(in.v[k]) - all.max) * inv_sum);
      store_pack(yr + e, out);
    }
  }
}

template <class T>
__global__ void softmax_columns(const T* __restrict__ x, T* __restrict__ y, std::int64_t outer, std::int64_t n,
                                std::int64_t inner) {
  const std::int64_t columns = outer * inner;
  for (std::int64_t c = global_thread(); c < columns; c += grid_threads()) {
    const std::int64_t base = (c / inner) * n * inner + c % inner;
    Online mine;
    for (std::int64_t k = 0; k < n; ++k) mine.add(to_float(x[base + k * inner]));
    const float inv_sum = 1.0f / mine.sum;
    for (std::int64_t k = 0; k < n; ++k) {
      y[base + k * inner] = store_as<T>(__expf(to_float(x[base + k * inner]) - mine.max) * inv_sum);
    }
  }
}

template <class T, int kVec>
struct RowSoftmaxLauncher {
  const SoftmaxArgs& a;
  std::int64_t rows;
  NativeStream stream;

  template <int kPacks>
  bool in_registers(int max_threads) const {
    if constexpr (kPacks * kVec > kRegisterFloats) {
      return false;
    } else {
      const std::int64_t threads = ceil_div(ceil_div(a.n, kVec), kPacks);
      if (threads > max_threads) return in_registers<kPacks * 2>(max_threads);
      softmax_rows_in_registers<T, kVec, kPacks><<<blocks_for(rows, 1), threads_for(threads, 1024), 0, stream>>>(
          static_cast<const T*>(a.x), static_cast<T*>(a.y), rows, a.n);
      return true;
    }
  }

  void operator()() const {
    // Blocks of at most 256 threads with a few packs each keep more loads in flight per thread.
    if (in_registers<1>(256) || in_registers<1>(512) || in_registers<1>(1024)) return;
    softmax_rows_streamed<T, kVec>
        <<<blocks_for(rows, 1), 1024, 0, stream>>>(static_cast<const T*>(a.x), static_cast<T*>(a.y), rows, a.n);
  }
};

}  // namespace

void launch_softmax(const SoftmaxArgs& a, void* stream) {
  if (a.outer == 0 || a.n == 0 || a.inner == 0) return;
  with_float_type(a.dtype, "softmax", [&](auto tag) {
    using T = decltype(tag);
    constexpr int kVec = kVec16<T>;
    if (a.inner != 1) {
      softmax_columns<T><<<blocks_for(a.outer * a.inner, 256), 256, 0, native_stream(stream)>>>(
          static_cast<const T*>(a.x), static_cast<T*>(a.y), a.outer, a.n, a.inner);
    } else if (a.n % kVec == 0 && aligned16(a.x) && aligned16(a.y)) {
      RowSoftmaxLauncher<T, kVec>{a, a.outer, native_stream(stream)}();
    } else {
      RowSoftmaxLauncher<T, 1>{a, a.outer, native_stream(stream)}();
    }
  });
  check_launch("softmax");
}

}  // namespace tileops::gpu
