// Element types of device kernels and their conversions: float16 and bfloat16 are stored as
// their 16-bit patterns and computed in float (double or int64 where a kernel accumulates so),
// with round-to-nearest-even on the way back, as the host's conversions do.
#pragma once

#include <cstdint>

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
