// Softmax. Over the last axis, a row that fits in one block's registers is read once (max,
// sum of exponentials, output from registers); a longer row takes one online pass (running
// max and rescaled sum per thread) and one output pass. Over an inner axis (inner > 1), each
// thread owns one column and makes the same two passes down it, reads coalesced across the
// columns.
#include <optional>

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
          v[p][k] = pack_float(in, k);
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
#pragma unroll
        for (int k = 0; k < kVec; ++k) v[p][k] *= inv_sum;
        store_pack(yr + e, pack_from_floats<T>(v[p]));
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

template <class T>
using SoftmaxRowKernelFn = void (*)(const T*, T*, std::int64_t, std::int64_t);

// A row of n held in registers by blocks of at most max_threads threads, each holding the
// fewest packs that do it; none where the register budget falls short.
template <class T, int kVec, int kPacks = 1>
std::optional<RowKernel<SoftmaxRowKernelFn<T>>> softmax_in_registers(std::int64_t n, std::int64_t max_threads) {
  if constexpr (kPacks * kVec > kRegisterFloats) {
    return std::nullopt;
  } else {
    const std::int64_t threads = ceil_div(ceil_div(n, kVec), kPacks);
    if (threads > max_threads) return softmax_in_registers<T, kVec, kPacks * 2>(n, max_threads);
    return RowKernel<SoftmaxRowKernelFn<T>>{softmax_rows_in_registers<T, kVec, kPacks>, threads_for(threads, 1024), 1};
  }
}

// The kernel for rows of n elements: in registers where they fit, preferring blocks of at most
// 256 threads with a few packs each (more loads in flight per thread); else streamed.
template <class T, int kVec>
RowKernel<SoftmaxRowKernelFn<T>> softmax_row_kernel(std::int64_t n) {
  for (const std::int64_t max_threads : {256, 512, 1024}) {
    if (const auto k = softmax_in_registers<T, kVec>(n, max_threads)) return *k;
  }
  return {softmax_rows_streamed<T, kVec>, 1024, 1};
}

}  // namespace

void launch_softmax(const SoftmaxArgs& a, void* stream) {
  if (a.outer == 0 || a.n == 0 || a.inner == 0) return;
  with_float_type(a.dtype, "softmax", [&](auto tag) {
    using T = decltype(tag);
    constexpr int kVec = kVec16<T>;
    if (a.inner != 1) {
      softmax_columns<T><<<blocks_for(a.outer * a.inner, 256), 256, 0, native_stream(stream)>>>(
          static_cast<const T*>(a.x), static_cast<T*>(a.y), a.outer, a.n, a.inner);
    } else {
      const bool wide = a.n % kVec == 0 && aligned16(a.x) && aligned16(a.y);
      const RowKernel<SoftmaxRowKernelFn<T>> k = wide ? softmax_row_kernel<T, kVec>(a.n) : softmax_row_kernel<T, 1>(a.n);
      // resident_blocks counts the form for aligned tensors; misaligned ones take the narrow form.
      const std::int64_t resident = wide || a.n % kVec != 0 ? a.resident_blocks : 0;
      k.kernel<<<k.grid(a.outer, resident), k.threads, 0, native_stream(stream)>>>(
          static_cast<const T*>(a.x), static_cast<T*>(a.y), a.outer, a.n);
    }
  });
  check_launch("softmax");
}

std::int64_t softmax_resident_blocks(std::int64_t n, DType dtype, int sm_count) {
  if (n == 0) return 0;
  std::int64_t resident = 0;
  with_float_type(dtype, "softmax", [&](auto tag) {
    using T = decltype(tag);
    constexpr int kVec = kVec16<T>;
    resident = n % kVec == 0 ? softmax_row_kernel<T, kVec>(n).resident_blocks(sm_count)
                             : softmax_row_kernel<T, 1>(n).resident_blocks(sm_count);
  });
  return resident;
}

}  // namespace tileops::gpu
