// Sum, product and mean (a sum divided on the way out) over the middle axis of [outer, reduce, inner]. Rows (inner == 1) are
// reduced by a block each, columns (inner > 1) by a thread per group of adjacent columns,
// reads coalesced across the group. When that leaves too few blocks to keep the device busy
// (one long row, a few columns), the reduced axis is split across blocks that write partial
// results; a second launch combines them in split order, so results do not depend on timing.
#include "../host/launchers.hpp"
#include "launch.cuh"

namespace tileops::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;

// Accumulates in int64 for integer outputs, in double otherwise.
template <class Out>
using Acc = std::conditional_t<std::is_integral_v<Out>, std::int64_t, double>;

template <class A, class In>
__device__ __forceinline__ A load_acc(In v) {
  if constexpr (std::is_integral_v<A>) {
    if constexpr (std::is_integral_v<In>) {
      return static_cast<A>(v);
    } else {
      return static_cast<A>(to_double(v));
    }
  } else {
    return to_double(v);
  }
}

template <bool kProduct>
struct Combine {
  __device__ __forceinline__ double operator()(double a, double b) const { return kProduct ? a * b : a + b; }
  // Integer products wrap, as the reference's int64 arithmetic does in practice.
  __device__ __forceinline__ std::int64_t operator()(std::int64_t a, std::int64_t b) const {
    const auto ua = static_cast<std::uint64_t>(a), ub = static_cast<std::uint64_t>(b);
    return static_cast<std::int64_t>(kProduct ? ua * ub : ua + ub);
  }
};

template <class A, bool kProduct>
__device__ __forceinline__ A identity() {
  return kProduct ? A(1) : A(0);
}

// A result as stored: floating ones divided by `divisor` (1 but for a mean).
template <class Out, class A>
__device__ __forceinline__ Out finish(A acc, double divisor) {
  if constexpr (std::is_integral_v<A>) {
    return store_as<Out>(acc);
  } else {
    return store_as<Out>(acc / divisor);
  }
}

// One block per (row, split): the split's chunk of the row, `chunk` elements from its start.
template <class In, class Out, int kVec, bool kProduct>
__global__ void reduce_rows(const In* __restrict__ x, Out* __restrict__ y, Acc<Out>* __restrict__ partial,
                            std::int64_t rows, std::int64_t reduce, std::int64_t chunk, double divisor) {
  using A = Acc<Out>;
  __shared__ A scratch[kMaxWarps];
  const Combine<kProduct> op;
  const std::int64_t begin = blockIdx.y * chunk;
  const std::int64_t end = begin + chunk < reduce ? begin + chunk : reduce;
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const In* xr = x + row * reduce;
    A acc = identity<A, kProduct>();
    // kUnroll packs per thread in flight: all loaded before the first is accumulated.
    const std::int64_t stride = static_cast<std::int64_t>(blockDim.x) * kVec;
    for (std::int64_t e = begin + threadIdx.x * kVec; e < end; e += kUnroll * stride) {
      Pack<In, kVec> in[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (e + u * stride < end) in[u] = load_pack<kVec>(xr + e + u * stride);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (e + u * stride >= end) break;
#pragma unroll
        for (int k = 0; k < kVec; ++k) acc = op(acc, load_acc<A>(in[u].v[k]));
      }
    }
    acc = block_reduce(acc, op, identity<A, kProduct>(), scratch);
    if (threadIdx.x == 0) {
      if (partial == nullptr) {
        y[row] = finish<Out>(acc, divisor);
      } else {
        partial[blockIdx.y * rows + row] = acc;
      }
    }
  }
}

// One thread per (group of kVec adjacent columns, split).
template <class In, class Out, int kVec, bool kProduct>
__global__ void reduce_columns(const In* __restrict__ x, Out* __restrict__ y, Acc<Out>* __restrict__ partial,
                               std::int64_t outer, std::int64_t reduce, std::int64_t inner, std::int64_t chunk,
                               double divisor) {
  using A = Acc<Out>;
  const Combine<kProduct> op;
  const std::int64_t groups = outer * inner / kVec;
  const std::int64_t begin = blockIdx.y * chunk;
  const std::int64_t end = begin + chunk < reduce ? begin + chunk : reduce;
  for (std::int64_t g = global_thread(); g < groups; g += grid_threads()) {
    const std::int64_t o = g * kVec / inner;
    const std::int64_t i = g * kVec % inner;
    const In* base = x + o * reduce * inner + i;
    A acc[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) acc[k] = identity<A, kProduct>();
#pragma unroll 4
    for (std::int64_t r = begin; r < end; ++r) {
      const Pack<In, kVec> in = load_pack<kVec>(base + r * inner);
#pragma unroll
      for (int k = 0; k < kVec; ++k) acc[k] = op(acc[k], load_acc<A>(in.v[k]));
    }
    const std::int64_t column = o * inner + i;
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      if (partial == nullptr) {
        y[column + k] = finish<Out>(acc[k], divisor);
      } else {
        partial[blockIdx.y * outer * inner + column + k] = acc[k];
      }
    }
  }
}

// y[j] = the combination of the `splits` partial results of column j, in split order (the
// identity when there are none: an empty reduced axis), divided by `divisor`.
template <class Out, bool kProduct>
__global__ void combine_splits(const Acc<Out>* __restrict__ partial, Out* __restrict__ y, std::int64_t columns,
                               std::int64_t splits, double divisor) {
  using A = Acc<Out>;
  const Combine<kProduct> op;
  for (std::int64_t j = global_thread(); j < columns; j += grid_threads()) {
    A acc = identity<A, kProduct>();
    for (std::int64_t s = 0; s < splits; ++s) acc = op(acc, partial[s * columns + j]);
    y[j] = finish<Out>(acc, divisor);
  }
}

// How one reduction runs: the access width, and into how many splits the reduced axis goes.
struct ReducePlan {
  int vec = 1;
  std::int64_t splits = 1;
  std::int64_t chunk = 0;
};

ReducePlan plan_reduce(const ReduceArgs& a) {
  ReducePlan p;
  if (a.reduce == 0 || a.outer * a.inner == 0) return p;
  const std::int64_t wide = static_cast<std::int64_t>(16 / dtype_size(a.in_dtype));
  const std::int64_t busy = 4 * std::max(a.sm_count, 1);  // blocks that keep every multiprocessor fed
  std::int64_t blocks, min_chunk;
  if (a.inner == 1) {
    if (a.reduce % wide == 0 && aligned16(a.x)) p.vec = static_cast<int>(wide);
    blocks = a.outer;
    min_chunk = 4096;
  } else {
    if (a.inner % wide == 0 && aligned16(a.x)) p.vec = static_cast<int>(wide);
    blocks = ceil_div(a.outer * a.inner / p.vec, kThreads);
    min_chunk = 64;
  }
  if (blocks < busy) p.splits = std::clamp<std::int64_t>(ceil_div(busy, blocks), 1, ceil_div(a.reduce, min_chunk));
  p.splits = std::min<std::int64_t>(p.splits, 65535);
  p.chunk = ceil_div(ceil_div(a.reduce, p.splits), p.vec) * p.vec;
  p.splits = ceil_div(a.reduce, p.chunk);
  return p;
}

template <class In, class Out, bool kProduct, int kVec>
void run_split(const ReduceArgs& a, const ReducePlan& p, Acc<Out>* partial, NativeStream s) {
  const auto* x = static_cast<const In*>(a.x);
  auto* y = static_cast<Out*>(a.y);
  const dim3 grid_rows(blocks_for(a.outer, 1, 1 << 20), static_cast<unsigned>(p.splits));
  const dim3 grid_columns(blocks_for(a.outer * a.inner / kVec, kThreads), static_cast<unsigned>(p.splits));
  // Split partial results stay undivided: combine_splits divides their total.
  const double divisor = partial == nullptr ? a.divisor : 1.0;
  if (a.inner == 1) {
    // Threads enough for kUnroll packs each of a chunk (so a block's loads all go out at once).
    const int threads = threads_for(ceil_div(ceil_div(p.chunk, kVec), kUnroll), kThreads);
    reduce_rows<In, Out, kVec, kProduct>
        <<<grid_rows, threads, 0, s>>>(x, y, partial, a.outer, a.reduce, p.chunk, divisor);
  } else {
    reduce_columns<In, Out, kVec, kProduct>
        <<<grid_columns, kThreads, 0, s>>>(x, y, partial, a.outer, a.reduce, a.inner, p.chunk, divisor);
  }
}

template <class In, class Out, bool kProduct>
void run_reduce(const ReduceArgs& a, void* workspace, NativeStream s) {
  const ReducePlan p = plan_reduce(a);
  const std::int64_t columns = a.outer * a.inner;
  auto* partial = p.splits > 1 ? static_cast<Acc<Out>*>(workspace) : nullptr;
  if (a.reduce == 0) {
    combine_splits<Out, kProduct>
        <<<blocks_for(columns, kThreads), kThreads, 0, s>>>(nullptr, static_cast<Out*>(a.y), columns, 0, a.divisor);
    return;
  }
  if (p.vec == kVec16<In>) {
    run_split<In, Out, kProduct, kVec16<In>>(a, p, partial, s);
  } else {
    run_split<In, Out, kProduct, 1>(a, p, partial, s);
  }
  if (partial != nullptr) {
    combine_splits<Out, kProduct>
        <<<blocks_for(columns, kThreads), kThreads, 0, s>>>(partial, static_cast<Out*>(a.y), columns, p.splits,
                                                             a.divisor);
  }
}

}  // namespace

std::size_t reduce_workspace_bytes(const ReduceArgs& args) {
  const ReducePlan p = plan_reduce(args);
  return p.splits > 1 ? static_cast<std::size_t>(p.splits * args.outer * args.inner) * 8 : 0;
}

void launch_reduce(const ReduceArgs& a, void* workspace, void* stream) {
  if (a.outer * a.inner == 0) return;
  with_reduce_type(a.in_dtype, "reduce", [&](auto in_tag) {
    with_reduce_type(a.out_dtype, "reduce", [&](auto out_tag) {
      using In = decltype(in_tag);
      using Out = decltype(out_tag);
      if (a.product) {
        run_reduce<In, Out, true>(a, workspace, native_stream(stream));
      } else {
        run_reduce<In, Out, false>(a, workspace, native_stream(stream));
      }
    });
  });
  check_launch(a.product ? "prod" : "sum");
}

}  // namespace tileops::gpu
