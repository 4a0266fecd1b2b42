// RMSNorm and LayerNorm over rows, and the fused residual add and RMSNorm. A row that fits in the registers of one block is read once:
// each thread keeps its share, the block reduces, then normalizes from registers. Longer rows
// are streamed: two passes (RMSNorm) or three (LayerNorm: mean, centred variance, output),
// the later ones mostly from L2.
#include "../host/launchers.hpp"
#include "launch.cuh"

namespace tileops::gpu {
namespace {

// Register budget per thread for a row's share: 64 bytes of raw elements (four 16-byte packs,
// or sixteen single elements), kept as loaded and converted to float where used.
template <class T, int kVec>
inline constexpr int kMaxPacks = kVec == 1 ? 16 : 64 / static_cast<int>(sizeof(T) * kVec);

// Threads below which a block trades packs per thread for threads. At [16384, 4096] float16 on
// the H200, blocks of 128 threads holding 4 packs each matched or beat 256 threads of 2 (layer_norm
// 2% faster), and 256 threads of 1 pack were 20% slower. (Softmax, whose rows are held as float,
// measured the other way and keeps its own rule.)
constexpr int kRowMinThreads = 128;

// kRows rows per block at a time: for short rows of 16-bit elements one row alone gives a block
// too little to load for its fixed costs (the reductions, launching the block).
template <class T, int kVec, int kPacks, int kRows, bool kLayerNorm>
__global__ void __launch_bounds__(1024)
    row_norm_in_registers(const T* __restrict__ x, const T* __restrict__ weight, const T* __restrict__ bias,
                          T* __restrict__ y, std::int64_t rows, std::int64_t n, float eps) {
  __shared__ float scratch[kRows * kMaxWarps];
  const float inv_n = 1.0f / static_cast<float>(n);
  const auto column = [&](int p) { return (static_cast<std::int64_t>(p) * blockDim.x + threadIdx.x) * kVec; };
  for (std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * kRows; row0 < rows;
       row0 += static_cast<std::int64_t>(gridDim.x) * kRows) {
    Pack<T, kVec> v[kRows][kPacks];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
#pragma unroll
      for (int p = 0; p < kPacks; ++p) {
        if (row0 + r < rows && column(p) < n) v[r][p] = load_pack<kVec>(x + (row0 + r) * n + column(p));
      }
    }
    float acc[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      acc[r] = 0.0f;
#pragma unroll
      for (int p = 0; p < kPacks; ++p) {
        if (row0 + r < rows && column(p) < n) {
#pragma unroll
          for (int k = 0; k < kVec; ++k) {
            const float f = pack_float(v[r][p], k);
            acc[r] += kLayerNorm ? f : f * f;
          }
        }
      }
    }
    block_reduce_each(acc, Add{}, 0.0f, scratch);
    float mean[kRows], scale[kRows];
    if constexpr (kLayerNorm) {
      float centred[kRows];
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        mean[r] = acc[r] * inv_n;
        centred[r] = 0.0f;
#pragma unroll
        for (int p = 0; p < kPacks; ++p) {
          if (row0 + r < rows && column(p) < n) {
#pragma unroll
            for (int k = 0; k < kVec; ++k) {
              const float d = pack_float(v[r][p], k) - mean[r];
              centred[r] += d * d;
            }
          }
        }
      }
      block_reduce_each(centred, Add{}, 0.0f, scratch);
#pragma unroll
      for (int r = 0; r < kRows; ++r) scale[r] = rsqrtf(centred[r] * inv_n + eps);
    } else {
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        mean[r] = 0.0f;
        scale[r] = rsqrtf(acc[r] * inv_n + eps);
      }
    }
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      if (column(p) >= n) continue;
      Pack<T, kVec> w{}, b{};
      if (weight != nullptr) w = load_pack<kVec>(weight + column(p));
      if (bias != nullptr) b = load_pack<kVec>(bias + column(p));
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        if (row0 + r >= rows) continue;
        const auto normalized = [&](int k) {
          float o = (pack_float(v[r][p], k) - mean[r]) * scale[r];
          if (weight != nullptr) o *= pack_float(w, k);
          if (bias != nullptr) o += pack_float(b, k);
          return o;
        };
        // bfloat16 rounds the pack's pairs together and float16 each element as it is computed:
        // the forms the compiler gives 58 registers a thread at 4096 columns (8 blocks a
        // multiprocessor; the other form of each takes 49-50, 9 blocks), with which an H100 ran
        // [2048, 4096] at 86% (bfloat16) and 87% (float16) of a same-size copy; float16 at 9
        // blocks ran at 77%.
        Pack<T, kVec> out;
        if constexpr (std::is_same_v<T, bf16>) {
          float o[kVec];
#pragma unroll
          for (int k = 0; k < kVec; ++k) o[k] = normalized(k);
          out = pack_from_floats<T>(o);
        } else {
#pragma unroll
          for (int k = 0; k < kVec; ++k) out.v[k] = store_as<T>(normalized(k));
        }
        store_pack(y + (row0 + r) * n + column(p), out);
      }
    }
  }
}

template <class T, int kVec, bool kLayerNorm>
__global__ void __launch_bounds__(1024)
    row_norm_streamed(const T* __restrict__ x, const T* __restrict__ weight, const T* __restrict__ bias,
                      T* __restrict__ y, std::int64_t rows, std::int64_t n, float eps) {
  __shared__ float scratch[kMaxWarps];
  const float inv_n = 1.0f / static_cast<float>(n);
  const std::int64_t step = static_cast<std::int64_t>(blockDim.x) * kVec;
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * n;
    T* yr = y + row * n;
    float acc = 0.0f;
    for (std::int64_t e = threadIdx.x * kVec; e < n; e += step) {
      const Pack<T, kVec> in = load_pack<kVec>(xr + e);
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        const float f = to_float(in.v[k]);
        acc += kLayerNorm ? f : f * f;
      }
    }
    acc = block_reduce(acc, Add{}, 0.0f, scratch);
    float mean = 0.0f, scale;
    if constexpr (kLayerNorm) {
      mean = acc * inv_n;
      float centred = 0.0f;
      for (std::int64_t e = threadIdx.x * kVec; e < n; e += step) {
        const Pack<T, kVec> in = load_pack<kVec>(xr + e);
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          const float d = to_float(in.v[k]) - mean;
          centred += d * d;
        }
      }
      centred = block_reduce(centred, Add{}, 0.0f, scratch);
      scale = rsqrtf(centred * inv_n + eps);
    } else {
      scale = rsqrtf(acc * inv_n + eps);
    }
    for (std::int64_t e = threadIdx.x * kVec; e < n; e += step) {
      const Pack<T, kVec> in = load_pack<kVec>(xr + e);
      Pack<T, kVec> out;
      Pack<T, kVec> w{}, b{};
      if (weight != nullptr) w = load_pack<kVec>(weight + e);
      if (bias != nullptr) b = load_pack<kVec>(bias + e);
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        float o = (to_float(in.v[k]) - mean) * scale;
        if (weight != nullptr) o *= to_float(w.v[k]);
        if (bias != nullptr) o += to_float(b.v[k]);
        out.v[k] = store_as<T>(o);
      }
      store_pack(yr + e, out);
    }
  }
}

template <class T>
using RowNormKernelFn = void (*)(const T*, const T*, const T*, T*, std::int64_t, std::int64_t, float);

// The kernel for rows of n elements: as many packs per thread as the register budget holds while
// the block keeps at least kRowMinThreads threads (more of a row in flight per thread and fewer
// threads to reduce over); rows too long for the budget at 1024 threads are streamed.
template <class T, int kVec, bool kLayerNorm, int kPacks = kMaxPacks<T, kVec>>
RowKernel<RowNormKernelFn<T>> row_norm_kernel(std::int64_t n) {
  const std::int64_t threads = ceil_div(ceil_div(n, kVec), kPacks);
  if (threads > 1024) return {row_norm_streamed<T, kVec, kLayerNorm>, 1024, 1};
  if constexpr (kPacks > 1) {
    if (threads < kRowMinThreads) return row_norm_kernel<T, kVec, kLayerNorm, kPacks / 2>(n);
  }
  constexpr int kRows = sizeof(T) == 2 && kVec > 1 && 2 * kPacks <= kMaxPacks<T, kVec> ? 2 : 1;
  return {row_norm_in_registers<T, kVec, kPacks, kRows, kLayerNorm>, threads_for(threads, 1024), kRows};
}

// residual += x, rounded to T and stored, then y from the stored values; one block per row at
// a time. With kPacks > 0 each thread's share of the row (at most kPacks packs) stays in
// registers between the passes, all its loads issued before the first use; with kPacks == 0 the
// row is streamed and each thread reads back, in the second pass, only the elements it stored
// in the first, so the passes need no barrier between them beyond the reduction's. x may be
// residual itself: neither pointer is __restrict__, and every element is read before the
// thread that owns it writes it.
template <class T, int kVec, int kPacks>
__global__ void __launch_bounds__(1024)
    fused_add_rms_norm_kernel(const T* x, T* residual, const T* __restrict__ weight, T* __restrict__ y,
                              std::int64_t rows, std::int64_t n, float eps) {
  __shared__ float scratch[kMaxWarps];
  const float inv_n = 1.0f / static_cast<float>(n);
  const std::int64_t step = static_cast<std::int64_t>(blockDim.x) * kVec;
  const auto add = [](const Pack<T, kVec>& a, const Pack<T, kVec>& b, float& acc) {
    Pack<T, kVec> sum;
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      sum.v[k] = store_as<T>(to_float(a.v[k]) + to_float(b.v[k]));
      const float stored = to_float(sum.v[k]);
      acc += stored * stored;
    }
    return sum;
  };
  const auto normalized = [](const Pack<T, kVec>& r, const Pack<T, kVec>& w, float scale) {
    Pack<T, kVec> out;
#pragma unroll
    for (int k = 0; k < kVec; ++k) out.v[k] = store_as<T>(to_float(r.v[k]) * scale * to_float(w.v[k]));
    return out;
  };
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * n;
    T* rr = residual + row * n;
    T* yr = y + row * n;
    float acc = 0.0f;
    if constexpr (kPacks > 0) {
      Pack<T, kVec> a[kPacks], b[kPacks];
#pragma unroll
      for (int p = 0; p < kPacks; ++p) {
        const std::int64_t e = threadIdx.x * kVec + p * step;
        if (e < n) {
          a[p] = load_pack<kVec>(xr + e);
          b[p] = load_pack<kVec>(rr + e);
        }
      }
#pragma unroll
      for (int p = 0; p < kPacks; ++p) {
        const std::int64_t e = threadIdx.x * kVec + p * step;
        if (e < n) {
          a[p] = add(a[p], b[p], acc);
          store_pack(rr + e, a[p]);
        }
      }
      const float scale = rsqrtf(block_reduce(acc, Add{}, 0.0f, scratch) * inv_n + eps);
#pragma unroll
      for (int p = 0; p < kPacks; ++p) {
        const std::int64_t e = threadIdx.x * kVec + p * step;
        if (e < n) store_pack(yr + e, normalized(a[p], load_pack<kVec>(weight + e), scale));
      }
    } else {
      for (std::int64_t e = threadIdx.x * kVec; e < n; e += step) {
        store_pack(rr + e, add(load_pack<kVec>(xr + e), load_pack<kVec>(rr + e), acc));
      }
      const float scale = rsqrtf(block_reduce(acc, Add{}, 0.0f, scratch) * inv_n + eps);
      for (std::int64_t e = threadIdx.x * kVec; e < n; e += step) {
        store_pack(yr + e, normalized(load_pack<kVec>(rr + e), load_pack<kVec>(weight + e), scale));
      }
    }
  }
}

// A fused add + RMSNorm row of up to 4 x 1024 packs stays in registers, each thread keeping as
// few packs as hold a block to 512 threads (at 4096 columns, blocks of 256 to 512 threads
// measured fastest on the H200, 128 and 1024 markedly slower).
template <class T, int kVec, int kPacks>
void launch_fused_add_rms_norm_in_registers(const T* x, T* residual, const T* weight, T* y,
                                            const FusedAddRmsNormArgs& a, NativeStream s) {
  fused_add_rms_norm_kernel<T, kVec, kPacks>
      <<<blocks_for(a.rows, 1), threads_for(ceil_div(a.n / kVec, kPacks), 1024), 0, s>>>(x, residual, weight, y,
                                                                                         a.rows, a.n, a.eps);
}

template <class T, int kVec>
void launch_fused_add_rms_norm_as(const T* x, T* residual, const T* weight, T* y, const FusedAddRmsNormArgs& a,
                                  NativeStream s) {
  const std::int64_t packs = a.n / kVec;
  if (packs <= 512) {
    launch_fused_add_rms_norm_in_registers<T, kVec, 1>(x, residual, weight, y, a, s);
  } else if (packs <= 2 * 512) {
    launch_fused_add_rms_norm_in_registers<T, kVec, 2>(x, residual, weight, y, a, s);
  } else if (packs <= 4 * 1024) {
    launch_fused_add_rms_norm_in_registers<T, kVec, 4>(x, residual, weight, y, a, s);
  } else {
    fused_add_rms_norm_kernel<T, kVec, 0>
        <<<blocks_for(a.rows, 1), threads_for(packs, 1024), 0, s>>>(x, residual, weight, y, a.rows, a.n, a.eps);
  }
}

template <bool kLayerNorm>
void launch_row_norm(const RowNormArgs& a, void* stream, const char* name) {
  if (a.rows == 0 || a.n == 0) return;
  with_float_type(a.dtype, name, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kVec = kVec16<T>;
    const bool wide = a.n % kVec == 0 && aligned16(a.x) && aligned16(a.y) && aligned16(a.weight) && aligned16(a.bias);
    const RowKernel<RowNormKernelFn<T>> k =
        wide ? row_norm_kernel<T, kVec, kLayerNorm>(a.n) : row_norm_kernel<T, 1, kLayerNorm>(a.n);
    // resident_blocks counts the form for aligned tensors; misaligned ones take the narrow form.
    const std::int64_t resident = wide || a.n % kVec != 0 ? a.resident_blocks : 0;
    k.kernel<<<k.grid(a.rows, resident), k.threads, 0, native_stream(stream)>>>(
        static_cast<const T*>(a.x), static_cast<const T*>(a.weight), static_cast<const T*>(a.bias),
        static_cast<T*>(a.y), a.rows, a.n, a.eps);
  });
  check_launch(name);
}

template <bool kLayerNorm>
std::int64_t row_norm_resident_blocks(std::int64_t n, DType dtype, int sm_count, const char* name) {
  if (n == 0) return 0;
  std::int64_t resident = 0;
  with_float_type(dtype, name, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kVec = kVec16<T>;
    resident = n % kVec == 0 ? row_norm_kernel<T, kVec, kLayerNorm>(n).resident_blocks(sm_count)
                             : row_norm_kernel<T, 1, kLayerNorm>(n).resident_blocks(sm_count);
  });
  return resident;
}

}  // namespace

void launch_rms_norm(const RowNormArgs& args, void* stream) { launch_row_norm<false>(args, stream, "rms_norm"); }
void launch_layer_norm(const RowNormArgs& args, void* stream) { launch_row_norm<true>(args, stream, "layer_norm"); }
std::int64_t rms_norm_resident_blocks(std::int64_t n, DType dtype, int sm_count) {
  return row_norm_resident_blocks<false>(n, dtype, sm_count, "rms_norm");
}
std::int64_t layer_norm_resident_blocks(std::int64_t n, DType dtype, int sm_count) {
  return row_norm_resident_blocks<true>(n, dtype, sm_count, "layer_norm");
}

void launch_fused_add_rms_norm(const FusedAddRmsNormArgs& a, void* stream) {
  if (a.rows == 0 || a.n == 0) return;
  with_float_type(a.dtype, "fused_add_rms_norm", [&](auto tag) {
    using T = decltype(tag);
    constexpr int kVec = kVec16<T>;
    const auto* x = static_cast<const T*>(a.x);
    auto* residual = static_cast<T*>(a.residual);
    const auto* weight = static_cast<const T*>(a.weight);
    auto* y = static_cast<T*>(a.y);
    const NativeStream s = native_stream(stream);
    const bool wide = a.n % kVec == 0 && aligned16(x) && aligned16(residual) && aligned16(weight) && aligned16(y);
    if (wide) launch_fused_add_rms_norm_as<T, kVec>(x, residual, weight, y, a, s);
    else launch_fused_add_rms_norm_as<T, 1>(x, residual, weight, y, a, s);
  });
  check_launch("fused_add_rms_norm");
}

}  // namespace tileops::gpu
