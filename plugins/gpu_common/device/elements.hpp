// Element types of device kernels and their conversions: float16 and bfloat16 are stored as
// their 16-bit patterns and computed in float (double or int64 where a kernel accumulates so),
// with round-to-nearest-even on the way back, as the host's conversions do.
#pragma once

#include <cstdint>
#include <type_traits>

#include "portability.hpp"

namespace tileops::gpu {

struct f16 {
  std::uint16_t bits;
};
struct bf16 {
  std::uint16_t bits;
};

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(double v) { return static_cast<float>(v); }
__device__ __forceinline__ float to_float(f16 v) { return __half2float(__ushort_as_half(v.bits)); }
__device__ __forceinline__ float to_float(bf16 v) { return __uint_as_float(static_cast<std::uint32_t>(v.bits) << 16); }
__device__ __forceinline__ float to_float(std::int32_t v) { return static_cast<float>(v); }
__device__ __forceinline__ float to_float(std::int64_t v) { return static_cast<float>(v); }

__device__ __forceinline__ double to_double(float v) { return v; }
__device__ __forceinline__ double to_double(double v) { return v; }
__device__ __forceinline__ double to_double(f16 v) { return to_float(v); }
__device__ __forceinline__ double to_double(bf16 v) { return to_float(v); }
__device__ __forceinline__ double to_double(std::int32_t v) { return static_cast<double>(v); }
__device__ __forceinline__ double to_double(std::int64_t v) { return static_cast<double>(v); }

__device__ __forceinline__ f16 to_f16(float v) { return f16{__half_as_ushort(__float2half_rn(v))}; }
__device__ __forceinline__ bf16 to_bf16(float v) {
#if !defined(TILEOPS_GPU_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return bf16{__bfloat16_as_ushort(__float2bfloat16_rn(v))};  // one conversion instruction
#else
  std::uint32_t u = __float_as_uint(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) return bf16{static_cast<std::uint16_t>((u >> 16) | 0x40u)};  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return bf16{static_cast<std::uint16_t>(u >> 16)};
#endif
}

// Converts a computed value to element type T. Integers convert from their exact value (an
// int64 accumulator) or truncate a floating one.
template <class T>
struct Store;
template <>
struct Store<float> {
  __device__ static float from(float v) { return v; }
  __device__ static float from(double v) { return static_cast<float>(v); }
  __device__ static float from(std::int64_t v) { return static_cast<float>(v); }
};
template <>
struct Store<double> {
  __device__ static double from(float v) { return v; }
  __device__ static double from(double v) { return v; }
  __device__ static double from(std::int64_t v) { return static_cast<double>(v); }
};
template <>
struct Store<f16> {
  __device__ static f16 from(float v) { return to_f16(v); }
  __device__ static f16 from(double v) { return to_f16(static_cast<float>(v)); }
  __device__ static f16 from(std::int64_t v) { return to_f16(static_cast<float>(v)); }
};
template <>
struct Store<bf16> {
  __device__ static bf16 from(float v) { return to_bf16(v); }
  __device__ static bf16 from(double v) { return to_bf16(static_cast<float>(v)); }
  __device__ static bf16 from(std::int64_t v) { return to_bf16(static_cast<float>(v)); }
};
template <>
struct Store<std::int32_t> {
  __device__ static std::int32_t from(float v) { return static_cast<std::int32_t>(v); }
  __device__ static std::int32_t from(double v) { return static_cast<std::int32_t>(v); }
  __device__ static std::int32_t from(std::int64_t v) { return static_cast<std::int32_t>(v); }
};
template <>
struct Store<std::int64_t> {
  __device__ static std::int64_t from(float v) { return static_cast<std::int64_t>(v); }
  __device__ static std::int64_t from(double v) { return static_cast<std::int64_t>(v); }
  __device__ static std::int64_t from(std::int64_t v) { return v; }
};

template <class T, class V>
__device__ __forceinline__ T store_as(V v) {
  return Store<T>::from(v);
}

// N consecutive elements moved as one access: 16 bytes when N * sizeof(T) == 16 and the address
// is 16-byte aligned, which the launchers check before choosing such a width.
template <class T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

template <int N, class T>
__device__ __forceinline__ Pack<T, N> load_pack(const T* p) {
  return *reinterpret_cast<const Pack<T, N>*>(p);
}
template <int N, class T>
__device__ __forceinline__ void store_pack(T* p, const Pack<T, N>& pack) {
  *reinterpret_cast<Pack<T, N>*>(p) = pack;
}

// Element k of a pack as float. A bfloat16 pair is read from its 32-bit word, the low element
// shifted up and the high one masked: converting each element from its 16 bits took the 16-bit
// LayerNorm over [16384, 4096] 14% more instructions in bfloat16 than in float16 (an H100's
// profile), which the H200's higher bandwidth exposes. k must be a constant once unrolled.
template <class T, int N>
__device__ __forceinline__ float pack_float(const Pack<T, N>& p, int k) {
  if constexpr (std::is_same_v<T, bf16> && N % 2 == 0) {
    std::uint32_t word;
    __builtin_memcpy(&word, &p.v[k & ~1], sizeof word);
    return __uint_as_float((k & 1) == 0 ? word << 16 : word & 0xffff0000u);
  } else {
    return to_float(p.v[k]);
  }
}

// A pack of N floats rounded to T as store_as<T> rounds them; on CUDA from compute capability
// 8.0, 16-bit elements are rounded in pairs (one conversion instruction for two).
template <class T, int N>
__device__ __forceinline__ Pack<T, N> pack_from_floats(const float (&f)[N]) {
  Pack<T, N> out;
#if !defined(TILEOPS_GPU_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr ((std::is_same_v<T, bf16> || std::is_same_v<T, f16>) && N % 2 == 0) {
#pragma unroll
    for (int k = 0; k < N; k += 2) {
      if constexpr (std::is_same_v<T, bf16>) {
        const __nv_bfloat162 pair = __floats2bfloat162_rn(f[k], f[k + 1]);
        __builtin_memcpy(&out.v[k], &pair, sizeof pair);
      } else {
        const __half2 pair = __floats2half2_rn(f[k], f[k + 1]);
        __builtin_memcpy(&out.v[k], &pair, sizeof pair);
      }
    }
  } else
#endif
  {
#pragma unroll
    for (int k = 0; k < N; ++k) out.v[k] = store_as<T>(f[k]);
  }
  return out;
}

// The same for data read or written once, which the cache may evict first: 16-byte packs carry
// the streaming hint on CUDA (a relu over [2048, 4096] float16 then ran at 101-105% of a same-size
// copy on the H200, without it at 98-99%); other widths, and HIP, access as load_pack/store_pack.
template <int N, class T>
__device__ __forceinline__ Pack<T, N> load_pack_once(const T* p) {
#if !defined(TILEOPS_GPU_HIP)
  if constexpr (sizeof(Pack<T, N>) == 16) {
    const uint4 raw = __ldcs(reinterpret_cast<const uint4*>(p));
    Pack<T, N> pack;
    __builtin_memcpy(&pack, &raw, 16);
    return pack;
  }
#endif
  return load_pack<N>(p);
}
template <int N, class T>
__device__ __forceinline__ void store_pack_once(T* p, const Pack<T, N>& pack) {
#if !defined(TILEOPS_GPU_HIP)
  if constexpr (sizeof(Pack<T, N>) == 16) {
    uint4 raw;
    __builtin_memcpy(&raw, &pack, 16);
    __stcs(reinterpret_cast<uint4*>(p), raw);
    return;
  }
#endif
  store_pack(p, pack);
}

// Elements per 16-byte access.
template <class T>
inline constexpr int kVec16 = static_cast<int>(16 / sizeof(T));

}  // namespace tileops::gpu
