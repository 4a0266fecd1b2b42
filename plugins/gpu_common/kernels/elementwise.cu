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

// --- Add, a and b alike: each thread takes kUnroll packs blockDim.x apart per block tile.
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

// --- One value in, one value out (relu, gelu): as add_same_shape, one operand; `f` maps each
// element.
template <class T, int kVec, class F>
__global__ void map_kernel(const T* x, T* out, std::int64_t numel, F f) {
  const std::int64_t packs = numel / kVec;
  const std::int64_t tile = static_cast<std::int64_t>(blockDim.x) * kUnroll;
  for (std::int64_t base = blockIdx.x * tile + threadIdx.x; base < packs; base += gridDim.x * tile) {
    Pack<T, kVec> in[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const std::int64_t p = base + k * static_cast<std::int64_t>(blockDim.x);
      if (p < packs) in[k] = load_pack<kVec>(x + p * kVec);
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const std::int64_t p = base + k * static_cast<std::int64_t>(blockDim.x);
      if (p >= packs) break;
      Pack<T, kVec> o;
#pragma unroll
      for (int e = 0; e < kVec; ++e) o.v[e] = f(in[k].v[e]);
      store_pack(out + p * kVec, o);
    }
  }
}

struct ReluOp {
  template <class T>
  __device__ T operator()(T v) const {
    return to_float(v) < 0.0f ? store_as<T>(0.0f) : v;
  }
};

// --- Gelu, a map_kernel function. Both forms are x times a weight computed without cancellation, so
// a negative x keeps its relative accuracy where the result is tiny: Phi(x) from normcdff, and
// (1 + tanh(u)) / 2 = sigmoid(2u) from exp(-|2u|). Below -16 the weight is 0 in float; the
// early -0 also keeps -inf from giving -inf * 0 = NaN.
constexpr float kGeluNegligible = -16.0f;

__device__ __forceinline__ float gelu_erf(float x) { return x < kGeluNegligible ? -0.0f : x * normcdff(x); }

// kFast: approximate exp and division, for results rounded to 16 bits.
template <bool kFast>
__device__ __forceinline__ float gelu_tanh(float x) {
  if (x < kGeluNegligible) return -0.0f;
  const float two_u = 1.5957691216057308f * x * fmaf(0.044715f * x, x, 1.0f);
  const float e = kFast ? __expf(-fabsf(two_u)) : expf(-fabsf(two_u));
  const float r = kFast ? __fdividef(1.0f, 1.0f + e) : 1.0f / (1.0f + e);
  return x * (two_u >= 0.0f ? r : e * r);
}

template <bool kTanh>
struct GeluOp {
  template <class T>
  __device__ T operator()(T v) const {
    return store_as<T>(kTanh ? gelu_tanh<kRoundedTo16Bits<T>>(to_float(v)) : gelu_erf(to_float(v)));
  }
};

// The gate activations of GeluAndMul: the same forms as GeluOp.
struct GeluErfGate {
  template <class T>
  __device__ float apply(float v) const {
    return gelu_erf(v);
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
    if (numel % kVec == 0 && aligned16(in) && aligned16(o)) {
      map_kernel<T, kVec><<<flat_blocks(numel / kVec), kThreads, 0, s>>>(in, o, numel, f);
    } else {
      map_kernel<T, 1><<<flat_blocks(numel), kThreads, 0, s>>>(in, o, numel, f);
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
    launch_map("gelu", a.dtype, a.x, a.out, a.numel, GeluOp<true>{}, stream);
  } else {
    launch_map("gelu", a.dtype, a.x, a.out, a.numel, GeluOp<false>{}, stream);
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
