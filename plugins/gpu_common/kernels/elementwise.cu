// Elementwise kernels: SiluAndMul and GeluAndMul, Add (same shape, a repeated row, general strided
// broadcast), Relu, Gelu and ALiBi. Contiguous operands move 16 bytes per access where every pointer
// is aligned and the extents divide; the rest (odd offsets, tails) go element by element.
#include "../host/launchers.hpp"
#include "launch.cuh"

namespace tileops::gpu {
namespace {

constexpr int kThreads = 256;

// Computes in float for the floating dtypes and in int64 for the integer ones.
template <class T>
using Compute = std::conditional_t<std::is_integral_v<T>, std::int64_t, float>;

template <class T>
__device__ __forceinline__ Compute<T> widen(T v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<std::int64_t>(v);
  } else {
    return to_float(v);
  }
}

// Packs each thread keeps in flight: its loads are all issued before the first use.
constexpr int kUnroll = 4;

// The rows of a [rows, packs]-shaped launch: blockIdx.x * blockDim.x + threadIdx.x picks the
// pack column, and each thread takes kUnroll rows at a time, gridDim.y * kUnroll apart.
struct RowTile {
  std::int64_t first;
  std::int64_t step;
};
__device__ __forceinline__ RowTile row_tile() {
  return {static_cast<std::int64_t>(blockIdx.y) * kUnroll, static_cast<std::int64_t>(gridDim.y) * kUnroll};
}

// --- SiluAndMul and GeluAndMul: rows of [gate | up] into rows of n, act(gate) * up with `act`
// mapping a float gate to its activation.
template <class T, int kVec, class Act>
__global__ void act_and_mul_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t rows, std::int64_t n,
                                   Act act) {
  const std::int64_t packs = n / kVec;
  for (std::int64_t p = global_thread(); p < packs; p += grid_threads()) {
    for (RowTile t = row_tile(); t.first < rows; t.first += t.step) {
      Pack<T, kVec> g[kUnroll], u[kUnroll];
#pragma unroll
      for (int k = 0; k < kUnroll; ++k) {
        const std::int64_t row = t.first + k;
        if (row < rows) {
          g[k] = load_pack<kVec>(x + row * 2 * n + p * kVec);
          u[k] = load_pack<kVec>(x + row * 2 * n + n + p * kVec);
        }
      }
#pragma unroll
      for (int k = 0; k < kUnroll; ++k) {
        const std::int64_t row = t.first + k;
        if (row >= rows) break;
        Pack<T, kVec> o;
#pragma unroll
        for (int e = 0; e < kVec; ++e) {
          o.v[e] = store_as<T>(act.template apply<T>(to_float(g[k].v[e])) * to_float(u[k].v[e]));
        }
        store_pack(y + row * n + p * kVec, o);
      }
    }
  }
}

// Whether results are rounded to 16 bits, so that an activation may use the hardware's
// approximate exp and division (a few float ulps) instead of the exactly rounded ones.
template <class T>
inline constexpr bool kRoundedTo16Bits = sizeof(T) == 2;

// act.apply<T>(gate) for a result in T.
struct SiluGate {
  template <class T>
  __device__ float apply(float v) const {
    if constexpr (kRoundedTo16Bits<T>) return __fdividef(v, 1.0f + __expf(-v));
    else return v / (1.0f + __expf(-v));
  }
};

// --- Add, a and b alike: each thread takes kUnroll packs blockDim.x apart per block tile. (The
// shape the maps below use for cheap functions, 128 threads of 2 packs with the streaming hint,
// ran the add at 0.94-0.95x PyTorch at [16384, 4096] on the H200 where this shape runs at 0.99-1.00x.)
template <class T, int kVec>
__global__ void add_same_shape(const T* a, const T* b, T* out, std::int64_t numel, Compute<T> alpha) {
  const std::int64_t packs = numel / kVec;
  const std::int64_t tile = static_cast<std::int64_t>(blockDim.x) * kUnroll;
  for (std::int64_t base = blockIdx.x * tile + threadIdx.x; base < packs; base += gridDim.x * tile) {
    Pack<T, kVec> pa[kUnroll], pb[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const std::int64_t p = base + k * static_cast<std::int64_t>(blockDim.x);
      if (p < packs) {
        pa[k] = load_pack<kVec>(a + p * kVec);
        pb[k] = load_pack<kVec>(b + p * kVec);
      }
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const std::int64_t p = base + k * static_cast<std::int64_t>(blockDim.x);
      if (p >= packs) break;
      Pack<T, kVec> o;
#pragma unroll
      for (int e = 0; e < kVec; ++e) o.v[e] = store_as<T>(widen(pa[k].v[e]) + alpha * widen(pb[k].v[e]));
      store_pack(out + p * kVec, o);
    }
  }
}

// --- Add of one row b of `period` elements to every row of a: the b pack stays in registers
// for the thread's rows.
template <class T, int kVec>
__global__ void add_row(const T* a, const T* __restrict__ b, T* out, std::int64_t rows, std::int64_t period,
                        Compute<T> alpha) {
  const std::int64_t packs = period / kVec;
  for (std::int64_t p = global_thread(); p < packs; p += grid_threads()) {
    const Pack<T, kVec> pb = load_pack<kVec>(b + p * kVec);
    for (RowTile t = row_tile(); t.first < rows; t.first += t.step) {
      Pack<T, kVec> pa[kUnroll];
#pragma unroll
      for (int k = 0; k < kUnroll; ++k) {
        if (t.first + k < rows) pa[k] = load_pack<kVec>(a + (t.first + k) * period + p * kVec);
      }
#pragma unroll
      for (int k = 0; k < kUnroll; ++k) {
        if (t.first + k >= rows) break;
        Pack<T, kVec> o;
#pragma unroll
        for (int e = 0; e < kVec; ++e) o.v[e] = store_as<T>(widen(pa[k].v[e]) + alpha * widen(pb.v[e]));
        store_pack(out + (t.first + k) * period + p * kVec, o);
      }
    }
  }
}

struct StridedLayout {
  int rank;
  std::int64_t shape[kMaxStridedRank];
  std::int64_t a[kMaxStridedRank];
  std::int64_t b[kMaxStridedRank];
};

template <class T>
__global__ void add_strided(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, std::int64_t numel,
                            StridedLayout l, Compute<T> alpha) {
  for (std::int64_t i = global_thread(); i < numel; i += grid_threads()) {
    std::int64_t rest = i, oa = 0, ob = 0;
    for (int d = l.rank - 1; d >= 0; --d) {
      const std::int64_t coord = rest % l.shape[d];
      rest /= l.shape[d];
      oa += coord * l.a[d];
      ob += coord * l.b[d];
    }
    out[i] = store_as<T>(widen(a[oa]) + alpha * widen(b[ob]));
  }
}

// f applied to each element of a pack, or to the whole pack where f maps packs itself (f.pack).
template <class F, class T, int kVec>
__device__ __forceinline__ Pack<T, kVec> map_pack(const F& f, const Pack<T, kVec>& in) {
  if constexpr (requires { f.pack(in); }) {
    return f.pack(in);
  } else {
    Pack<T, kVec> o;
#pragma unroll
    for (int e = 0; e < kVec; ++e) o.v[e] = f(in.v[e]);
    return o;
  }
}

// --- One value in, one value out (relu, gelu): each thread takes kPacks packs blockDim.x apart
// per block tile; `f` maps each element (map_pack). kOnce: accesses carry the streaming hint.
template <class T, int kVec, int kPacks, bool kOnce, class F>
__global__ void map_kernel(const T* x, T* out, std::int64_t numel, F f) {
  const std::int64_t packs = numel / kVec;
  const std::int64_t tile = static_cast<std::int64_t>(blockDim.x) * kPacks;
  for (std::int64_t base = blockIdx.x * tile + threadIdx.x; base < packs; base += gridDim.x * tile) {
    Pack<T, kVec> in[kPacks];
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      const std::int64_t p = base + k * static_cast<std::int64_t>(blockDim.x);
      if (p < packs) in[k] = kOnce ? load_pack_once<kVec>(x + p * kVec) : load_pack<kVec>(x + p * kVec);
    }
#pragma unroll
    for (int k = 0; k < kPacks; ++k) {
      const std::int64_t p = base + k * static_cast<std::int64_t>(blockDim.x);
      if (p >= packs) break;
      if constexpr (kOnce) store_pack_once(out + p * kVec, map_pack(f, in[k]));
      else store_pack(out + p * kVec, map_pack(f, in[k]));
    }
  }
}

// How map_kernel is launched for a function: a few instructions per element (relu, gelu tanh)
// take blocks of 128 threads of 2 packs with the streaming hint, which ran a float16 relu at 100%
// of a same-size copy on the H200 at [16384, 4096] and 101-105% at [2048, 4096] (256 threads of 4
// packs: 96% and 93-99%). A function marked kArithmetic (some 25 instructions per element) keeps
// 256 threads of 4 packs, which ran the float16 erf GELU at 90% where the other shape ran at 86%.
// At [2048, 4096] every shape from 128 threads of 1 pack to 256 of 4 ran it at 58-61% of a
// same-size copy (relu: 92-103%): there its arithmetic bounds it, not the block shape.
template <class F>
inline constexpr bool kArithmeticMap = requires { F::kArithmetic; };
template <class F>
inline constexpr int kMapThreads = kArithmeticMap<F> ? 256 : 128;
template <class F>
inline constexpr int kMapPacks = kArithmeticMap<F> ? 4 : 2;

struct ReluOp {
  template <class T>
  __device__ T operator()(T v) const {
    return to_float(v) < 0.0f ? store_as<T>(0.0f) : v;
  }
};

// --- Gelu, a map_kernel function. Below -16 the weight is 0 in float; the early -0 also keeps
// -inf from giving -inf * 0 = NaN.
constexpr float kGeluNegligible = -16.0f;

// Where x >= kErfFormFrom the erf form's weight (1 + erf(x / sqrt 2)) / 2 is at least 1.3e-3, so
// its cancellation costs at most 5e-5 relative. Below it (0.13% of normally distributed inputs)
// erfcf, which has no cancellation, keeps the relative accuracy where the result is tiny.
constexpr float kErfFormFrom = -3.0f;
constexpr float kInvSqrt2 = 0.70710678118654752f;

__device__ __forceinline__ float gelu_erf_exact(float x) {
  if (x < kGeluNegligible) return -0.0f;
  if (x < kErfFormFrom) return 0.5f * x * erfcf(-x * kInvSqrt2);
  return 0.5f * x * (1.0f + erff(x * kInvSqrt2));
}

// For results rounded to 16 bits: erfc(z) = t * exp(P(t) - z^2) with t = 1 / (1 + z / 2) and P of
// degree 5, whose coefficients were fitted for this kernel by weighted least squares over z in
// [0, 16 / sqrt 2]. Its relative error is below 8e-6 for every z there, also where erfc is tiny,
// so x * erfc(-x / sqrt 2) / 2 needs no separate left tail and no branch: one approximate
// reciprocal, one approximate exp and eight multiply-adds against erff's polynomial plus the tail.
// Results over every float16 input in [-16, 4] are within 0.52 of their spacing (float16 and
// bfloat16 rounding simulated in float32 against the exact function).
__device__ __forceinline__ float gelu_erf_fast(float x) {
  const float z = fabsf(x) * kInvSqrt2;
  const float t = __fdividef(1.0f, fmaf(0.5f, z, 1.0f));
  float p = 0.22879648f;
  p = fmaf(p, t, -0.70921487f);
  p = fmaf(p, t, 0.47452778f);
  p = fmaf(p, t, 0.25442019f);
  p = fmaf(p, t, 1.01802063f);
  p = fmaf(p, t, -1.26654255f);
  const float erfc_z = t * __expf(fmaf(-z, z, p));
  const float weight = x < 0.0f ? 0.5f * erfc_z : fmaf(-0.5f, erfc_z, 1.0f);
  return x < kGeluNegligible ? -0.0f : x * weight;
}

template <bool kFast>
__device__ __forceinline__ float gelu_erf(float x) {
  if constexpr (kFast) return gelu_erf_fast(x);
  return gelu_erf_exact(x);
}

// (1 + tanh(u)) / 2 = 1 / (1 + exp(-2u)): a sum of two positive terms, so no cancellation for a
// negative x. kFast: approximate exp and division, for results rounded to 16 bits.
template <bool kFast>
__device__ __forceinline__ float gelu_tanh(float x) {
  if (x < kGeluNegligible) return -0.0f;
  const float two_u = 1.5957691216057308f * x * fmaf(0.044715f * x, x, 1.0f);
  if constexpr (kFast) return __fdividef(x, 1.0f + __expf(-two_u));
  return x / (1.0f + expf(-two_u));
}

struct GeluTanhOp {
  template <class T>
  __device__ T operator()(T v) const {
    return store_as<T>(gelu_tanh<kRoundedTo16Bits<T>>(to_float(v)));
  }
};

// The exact erf form (float results) maps whole packs: the erf form of every element without a
// branch, so that the elements' instructions interleave, then the rare elements below
// kErfFormFrom redone. With a branch per element, even one never taken, the float16 kernel ran at
// 58% of a same-size copy on the H200. 16-bit results take gelu_erf_fast, which has no branch.
struct GeluErfOp {
  static constexpr bool kArithmetic = true;
  template <class T, int kVec>
  __device__ Pack<T, kVec> pack(const Pack<T, kVec>& in) const {
    Pack<T, kVec> o;
    if constexpr (kRoundedTo16Bits<T>) {
#pragma unroll
      for (int e = 0; e < kVec; ++e) o.v[e] = store_as<T>(gelu_erf_fast(to_float(in.v[e])));
    } else {
      float x[kVec];
      bool tail = false;
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        x[e] = to_float(in.v[e]);
        tail |= x[e] < kErfFormFrom;
      }
#pragma unroll
      for (int e = 0; e < kVec; ++e) o.v[e] = store_as<T>(0.5f * x[e] * (1.0f + erff(x[e] * kInvSqrt2)));
      if (tail) {
#pragma unroll
        for (int e = 0; e < kVec; ++e) {
          if (x[e] < kErfFormFrom) o.v[e] = store_as<T>(gelu_erf_exact(x[e]));
        }
      }
    }
    return o;
  }
};

// The gate activations of GeluAndMul: the same forms as GeluTanhOp and GeluErfOp.
struct GeluErfGate {
  template <class T>
  __device__ float apply(float v) const {
    return gelu_erf<kRoundedTo16Bits<T>>(v);
  }
};
struct GeluTanhGate {
  template <class T>
  __device__ float apply(float v) const {
    return gelu_tanh<kRoundedTo16Bits<T>>(v);
  }
};

// --- ALiBi: blockIdx.y walks the (head, query) rows, x walks packs of a row.
template <class T, int kVec>
__global__ void alibi_kernel(const double* __restrict__ slopes, T* __restrict__ y, std::int64_t heads,
                             std::int64_t seq) {
  const std::int64_t packs = seq / kVec;
  for (std::int64_t row = blockIdx.y; row < heads * seq; row += gridDim.y) {
    const double slope = slopes[row / seq];
    const std::int64_t i = row % seq;
    for (std::int64_t p = global_thread(); p < packs; p += grid_threads()) {
      Pack<T, kVec> o;
#pragma unroll
      for (int k = 0; k < kVec; ++k) o.v[k] = store_as<T>(slope * static_cast<double>(p * kVec + k - i));
      store_pack(y + row * seq + p * kVec, o);
    }
  }
}

// A grid for `rows` rows of `packs` packs each: x over a row's packs, y over tiles of kUnroll
// rows (the kernels loop over what the y limit leaves).
dim3 row_grid(std::int64_t rows, std::int64_t packs) {
  return dim3(blocks_for(packs, kThreads, 1 << 16),
              static_cast<unsigned>(std::clamp<std::int64_t>(ceil_div(rows, kUnroll), 1, 65535)));
}

// Blocks for `packs` packs taken kUnroll at a time per thread.
unsigned flat_blocks(std::int64_t packs) { return blocks_for(packs, kThreads * kUnroll); }

// Launches map_kernel over `numel` contiguous elements of a float dtype: packs of 16 bytes when
// both buffers allow it, else one element at a time.
template <class F>
void launch_map(const char* name, DType dtype, const void* x, void* out, std::int64_t numel, F f, void* stream) {
  if (numel == 0) return;
  with_float_type(dtype, name, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kVec = kVec16<T>;
    const auto* in = static_cast<const T*>(x);
    auto* o = static_cast<T*>(out);
    const NativeStream s = native_stream(stream);
    constexpr int kThreadsHere = kMapThreads<F>, kPacks = kMapPacks<F>;
    constexpr bool kOnce = !kArithmeticMap<F>;
    if (numel % kVec == 0 && aligned16(in) && aligned16(o)) {
      map_kernel<T, kVec, kPacks, kOnce>
          <<<blocks_for(numel / kVec, kThreadsHere * kPacks), kThreadsHere, 0, s>>>(in, o, numel, f);
    } else {
      map_kernel<T, 1, kPacks, kOnce><<<blocks_for(numel, kThreadsHere * kPacks), kThreadsHere, 0, s>>>(in, o, numel, f);
    }
  });
  check_launch(name);
}

// Launches act_and_mul_kernel over rows of [gate | up]: packs of 16 bytes when both buffers and
// the half width n allow it, else one element at a time.
template <class Act>
void launch_act_and_mul(const char* name, DType dtype, const void* xp, void* yp, std::int64_t rows, std::int64_t n,
                        Act act, void* stream) {
  if (rows == 0 || n == 0) return;
  with_float_type(dtype, name, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kVec = kVec16<T>;
    const auto* x = static_cast<const T*>(xp);
    auto* y = static_cast<T*>(yp);
    if (n % kVec == 0 && aligned16(x) && aligned16(y)) {
      act_and_mul_kernel<T, kVec><<<row_grid(rows, n / kVec), kThreads, 0, native_stream(stream)>>>(x, y, rows, n, act);
    } else {
      act_and_mul_kernel<T, 1><<<row_grid(rows, n), kThreads, 0, native_stream(stream)>>>(x, y, rows, n, act);
    }
  });
  check_launch(name);
}

}  // namespace

void launch_silu_and_mul(const SiluAndMulArgs& a, void* stream) {
  launch_act_and_mul("silu_and_mul", a.dtype, a.x, a.y, a.rows, a.n, SiluGate{}, stream);
}

void launch_gelu_and_mul(const GeluAndMulArgs& a, void* stream) {
  if (a.tanh_approximation) {
    launch_act_and_mul("gelu_and_mul", a.dtype, a.x, a.y, a.rows, a.n, GeluTanhGate{}, stream);
  } else {
    launch_act_and_mul("gelu_and_mul", a.dtype, a.x, a.y, a.rows, a.n, GeluErfGate{}, stream);
  }
}

void launch_add(const AddArgs& a, void* stream) {
  if (a.numel == 0) return;
  const auto body = [&](auto tag) {
    using T = decltype(tag);
    constexpr int kVec = kVec16<T>;
    const auto* pa = static_cast<const T*>(a.a);
    const auto* pb = static_cast<const T*>(a.b);
    auto* out = static_cast<T*>(a.out);
    const auto alpha = static_cast<Compute<T>>(a.alpha);
    const NativeStream s = native_stream(stream);
    if (a.strided) {
      StridedLayout l{a.rank, {}, {}, {}};
      for (int d = 0; d < a.rank; ++d) {
        l.shape[d] = a.shape[d];
        l.a[d] = a.a_strides[d];
        l.b[d] = a.b_strides[d];
      }
      add_strided<T><<<blocks_for(a.numel, kThreads), kThreads, 0, s>>>(pa, pb, out, a.numel, l, alpha);
    } else {
      const bool wide =
          a.numel % kVec == 0 && a.b_period % kVec == 0 && aligned16(pa) && aligned16(pb) && aligned16(out);
      if (a.b_period != a.numel) {
        const std::int64_t rows = a.numel / a.b_period;
        if (wide) {
          add_row<T, kVec><<<row_grid(rows, a.b_period / kVec), kThreads, 0, s>>>(pa, pb, out, rows, a.b_period, alpha);
        } else {
          add_row<T, 1><<<row_grid(rows, a.b_period), kThreads, 0, s>>>(pa, pb, out, rows, a.b_period, alpha);
        }
      } else if (wide) {
        add_same_shape<T, kVec><<<flat_blocks(a.numel / kVec), kThreads, 0, s>>>(pa, pb, out, a.numel, alpha);
      } else {
        add_same_shape<T, 1><<<flat_blocks(a.numel), kThreads, 0, s>>>(pa, pb, out, a.numel, alpha);
      }
    }
  };
  switch (a.dtype) {
    case DType::int32:
      body(std::int32_t{});
      break;
    case DType::int64:
      body(std::int64_t{});
      break;
    default:
      with_float_type(a.dtype, "add", body);
  }
  check_launch("add");
}

void launch_relu(const ReluArgs& a, void* stream) { launch_map("relu", a.dtype, a.x, a.out, a.numel, ReluOp{}, stream); }

void launch_gelu(const GeluArgs& a, void* stream) {
  if (a.tanh_approximation) {
    launch_map("gelu", a.dtype, a.x, a.out, a.numel, GeluTanhOp{}, stream);
  } else {
    launch_map("gelu", a.dtype, a.x, a.out, a.numel, GeluErfOp{}, stream);
  }
}

void launch_alibi(const AlibiArgs& a, void* stream) {
  if (a.heads == 0 || a.seq == 0) return;
  with_float_type(a.dtype, "alibi", [&](auto tag) {
    using T = decltype(tag);
    constexpr int kVec = kVec16<T>;
    auto* y = static_cast<T*>(a.y);
    const NativeStream s = native_stream(stream);
    if (a.seq % kVec == 0 && aligned16(y)) {
      alibi_kernel<T, kVec><<<row_grid(a.heads * a.seq, a.seq / kVec), kThreads, 0, s>>>(a.slopes, y, a.heads, a.seq);
    } else {
      alibi_kernel<T, 1><<<row_grid(a.heads * a.seq, a.seq), kThreads, 0, s>>>(a.slopes, y, a.heads, a.seq);
    }
  });
  check_launch("alibi");
}

}  // namespace tileops::gpu
