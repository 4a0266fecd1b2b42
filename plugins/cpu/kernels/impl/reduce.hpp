// Sum and product over the middle axis of [outer, reduce, inner].
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <type_traits>

#include "impl/dispatch.hpp"

namespace tileops::cpu {
namespace {

// Float sums add this many elements per lane, or rows per buffer, before folding the partial
// result into the running one: a cascade that keeps rounding error near log2 growth.
constexpr int64_t kCascadeElems = 2048;
constexpr int64_t kCascadeRows = 64;
// Packed segments hold at most this many elements.
constexpr int64_t kPackSegment = 512;
// The accumulator buffers hold a packed segment or a column block.
constexpr int64_t kAccElems = std::max(kPackSegment, kReduceColumnBlock);

template <class Acc>
struct AccVec;
template <>
struct AccVec<float> {
  using V = Vf;
};
template <>
struct AccVec<double> {
  using V = Vd;
};

template <class Acc, class T>
[[gnu::always_inline]] inline Acc to_acc(T v) {
  if constexpr (is_half_v<T>) {
    return static_cast<Acc>(to_float(v));
  } else {
    return static_cast<Acc>(v);
  }
}

template <class Out, class Acc>
[[gnu::always_inline]] inline Out from_acc(Acc v) {
  if constexpr (is_half_v<Out>) {
    return from_float<Out>(static_cast<float>(v));
  } else {
    return static_cast<Out>(v);
  }
}

struct SumOp {
  template <class A>
  static constexpr A identity = A(0);
  template <class A>
  [[gnu::always_inline]] static A apply(A a, A b) {
    if constexpr (std::is_integral_v<A>) {
      return static_cast<A>(static_cast<std::make_unsigned_t<A>>(a) +
                            static_cast<std::make_unsigned_t<A>>(b));
    } else {
      return a + b;
    }
  }
  template <class V>
  [[gnu::always_inline]] static typename V::R apply_vec(typename V::R a, typename V::R b) {
    return V::add(a, b);
  }
  template <class V>
  [[gnu::always_inline]] static auto horizontal(typename V::R v) {
    return V::sum(v);
  }
};

struct ProdOp {
  template <class A>
  static constexpr A identity = A(1);
  template <class A>
  [[gnu::always_inline]] static A apply(A a, A b) {
    if constexpr (std::is_integral_v<A>) {
      return static_cast<A>(static_cast<std::make_unsigned_t<A>>(a) *
                            static_cast<std::make_unsigned_t<A>>(b));
    } else {
      return a * b;
    }
  }
  template <class V>
  [[gnu::always_inline]] static typename V::R apply_vec(typename V::R a, typename V::R b) {
    return V::mul(a, b);
  }
  template <class V>
  [[gnu::always_inline]] static auto horizontal(typename V::R v) {
    return V::prod(v);
  }
};

// The reduction of a contiguous run of len elements.
template <class Op, class Acc, class T>
Acc reduce_contiguous(const T* x, int64_t len) {
  if constexpr (std::is_floating_point_v<Acc>) {
    using V = typename AccVec<Acc>::V;
    constexpr int64_t W = V::width;
    const typename V::R id = V::set1(Op::template identity<Acc>);
    typename V::R total = id;
    int64_t j = 0;
    while (j + 4 * W <= len) {
      const int64_t end = j + (std::min(len - j, kCascadeElems) / (4 * W)) * (4 * W);
      typename V::R a0 = id, a1 = id, a2 = id, a3 = id;
      for (; j < end; j += 4 * W) {
        a0 = Op::template apply_vec<V>(a0, V::load(x + j));
        a1 = Op::template apply_vec<V>(a1, V::load(x + j + W));
        a2 = Op::template apply_vec<V>(a2, V::load(x + j + 2 * W));
        a3 = Op::template apply_vec<V>(a3, V::load(x + j + 3 * W));
      }
      total = Op::template apply_vec<V>(
          total, Op::template apply_vec<V>(Op::template apply_vec<V>(a0, a1),
                                           Op::template apply_vec<V>(a2, a3)));
    }
    for (; j + W <= len; j += W) total = Op::template apply_vec<V>(total, V::load(x + j));
    Acc result = Op::template horizontal<V>(total);
    for (; j < len; ++j) result = Op::apply(result, to_acc<Acc>(x[j]));
    return result;
  } else {
    Acc result = Op::template identity<Acc>;
    for (int64_t j = 0; j < len; ++j) result = Op::apply(result, to_acc<Acc>(x[j]));
    return result;
  }
}

// acc[0, len) = x[0, len) converted (Init) or acc op x.
template <class Op, bool Init, class Acc, class T>
void accumulate(Acc* acc, const T* x, int64_t len) {
  int64_t j = 0;
  if constexpr (std::is_floating_point_v<Acc>) {
    using V = typename AccVec<Acc>::V;
    for (; j + V::width <= len; j += V::width) {
      if constexpr (Init) {
        V::store(acc + j, V::load(x + j));
      } else {
        V::store(acc + j, Op::template apply_vec<V>(V::load(acc + j), V::load(x + j)));
      }
    }
  }
  for (; j < len; ++j) acc[j] = Init ? to_acc<Acc>(x[j]) : Op::apply(acc[j], to_acc<Acc>(x[j]));
}

template <class Out, class Acc>
void store_accumulators(Out* y, const Acc* acc, int64_t len) {
  if constexpr (std::is_same_v<Acc, float>) {
    for_each_vector(0, len, [&](int64_t j, int64_t lanes) {
      Vf::storen(y + j, Vf::loadn(acc + j, lanes), lanes);
    });
  } else {
    for (int64_t j = 0; j < len; ++j) y[j] = from_acc<Out>(acc[j]);
  }
}

// Reduces `segments` full segments of len elements, the s-th at x + s * stride, into total;
// then a partial segment of tail_len elements (0: none) at x + segments * stride. Float sums
// gather kCascadeRows segments in a second buffer before adding them to the total.
template <class Op, class Acc, class T>
void reduce_segments(Acc* total, const T* x, int64_t stride, int64_t len, int64_t segments,
                     int64_t tail_len) {
  constexpr bool cascade = std::is_same_v<Acc, float> && std::is_same_v<Op, SumOp>;
  accumulate<Op, true>(total, x, len);
  for (int64_t s0 = 1; s0 < segments; s0 += kCascadeRows) {
    const int64_t s1 = std::min(segments, s0 + kCascadeRows);
    if constexpr (cascade) {
      alignas(64) Acc part[kAccElems];
      accumulate<Op, true>(part, x + s0 * stride, len);
      for (int64_t s = s0 + 1; s < s1; ++s) accumulate<Op, false>(part, x + s * stride, len);
      accumulate<Op, false>(total, static_cast<const Acc*>(part), len);
    } else {
      for (int64_t s = s0; s < s1; ++s) accumulate<Op, false>(total, x + s * stride, len);
    }
  }
  if (tail_len > 0) accumulate<Op, false>(total, x + segments * stride, tail_len);
}

template <class Acc>
constexpr int64_t accumulator_width() {
  if constexpr (std::is_floating_point_v<Acc>) {
    return AccVec<Acc>::V::width;
  } else {
    return 8;
  }
}

// Packed mode for one inner extent: `rows` rows of `inner` form a segment; `period`, when not 0,
// is a length that divides the segment and is a multiple of both inner and the vector width, so
// that the segment folds to `period` accumulators with whole vectors. rows == 0: too few rows to
// pack, reduce with a plain loop.
struct Packing {
  int64_t rows;
  int64_t period;
};

template <class Acc>
Packing packing(int64_t inner, int64_t reduce) {
  const int64_t period = std::lcm(inner, accumulator_width<Acc>());
  if (period > kPackSegment) return {std::min(kPackSegment / inner, reduce), 0};
  const int64_t step = period / inner;
  if (reduce < step) return {0, 0};
  return {std::min(kPackSegment / period, reduce / step) * step, period};
}

// A result as stored: divided by `divisor` (in double) unless that is 1.
template <class Out, class Acc>
Out finish(Acc v, double divisor) {
  return from_acc<Out>(divisor == 1.0 ? v : static_cast<Acc>(static_cast<double>(v) / divisor));
}

// y[i] = the reduction of acc[i], acc[i + inner], ... over a segment of `segment` elements,
// divided by `divisor`.
template <class Op, class Acc, class Out>
void fold_segment(Acc* acc, int64_t segment, int64_t period, int64_t inner, Out* y, double divisor) {
  int64_t len = segment;
  if (period > 0) {
    for (int64_t q = period; q < segment; q += period) {
      accumulate<Op, false>(acc, static_cast<const Acc*>(acc + q), period);
    }
    len = period;
  }
  for (int64_t i = 0; i < inner; ++i) {
    Acc v = acc[i];
    for (int64_t q = inner + i; q < len; q += inner) v = Op::apply(v, acc[q]);
    y[i] = finish<Out>(v, divisor);
  }
}

template <class Op, class Acc, class T, class Out>
void reduce_items(const ReduceArgs& a, int64_t i0, int64_t i1) {
  const T* x = static_cast<const T*>(a.x);
  Out* y = static_cast<Out*>(a.y);
  const int64_t reduce = a.reduce;
  const int64_t inner = a.inner;
  if (inner == 1) {
    for (int64_t o = i0; o < i1; ++o) {
      y[o] = finish<Out>(reduce_contiguous<Op, Acc>(x + o * a.x_outer_stride, reduce), a.divisor);
    }
    return;
  }
  alignas(64) Acc acc[kAccElems];
  if (inner <= kReducePackLimit) {
    const Packing pack = packing<Acc>(inner, reduce);
    if (pack.rows == 0) {
      for (int64_t o = i0; o < i1; ++o) {
        const T* xo = x + o * a.x_outer_stride;
        for (int64_t i = 0; i < inner; ++i) {
          Acc v = to_acc<Acc>(xo[i]);
          for (int64_t r = 1; r < reduce; ++r) v = Op::apply(v, to_acc<Acc>(xo[r * inner + i]));
          y[o * inner + i] = finish<Out>(v, a.divisor);
        }
      }
      return;
    }
    // Packed: pack.rows consecutive rows form one segment, so every load is a full run of
    // memory; the partial results of each column are folded at the end.
    const int64_t segment = pack.rows * inner;
    for (int64_t o = i0; o < i1; ++o) {
      reduce_segments<Op>(acc, x + o * a.x_outer_stride, segment, segment, reduce / pack.rows,
                          (reduce % pack.rows) * inner);
      fold_segment<Op>(acc, segment, pack.period, inner, y + o * inner, a.divisor);
    }
    return;
  }
  // Column blocks: each row contributes a run of up to kReduceColumnBlock elements.
  const int64_t blocks = reduce_column_blocks(inner);
  for (int64_t item = i0; item < i1; ++item) {
    const int64_t o = item / blocks;
    const int64_t c0 = (item % blocks) * kReduceColumnBlock;
    const int64_t len = std::min(kReduceColumnBlock, inner - c0);
    reduce_segments<Op>(acc, x + o * a.x_outer_stride + c0, inner, len, reduce, 0);
    if (a.divisor != 1.0) {
      for (int64_t j = 0; j < len; ++j) acc[j] = static_cast<Acc>(static_cast<double>(acc[j]) / a.divisor);
    }
    store_accumulators(y + o * inner + c0, static_cast<const Acc*>(acc), len);
  }
}

template <class Op>
void reduce_with(const ReduceArgs& a, int64_t i0, int64_t i1) {
  const auto with_input = [&]<class Acc, class Out>() {
    switch (a.in) {
      case DType::float32:
        return reduce_items<Op, Acc, float, Out>(a, i0, i1);
      case DType::float16:
        return reduce_items<Op, Acc, Half, Out>(a, i0, i1);
      case DType::bfloat16:
        return reduce_items<Op, Acc, BFloat16, Out>(a, i0, i1);
      case DType::float64:
        return reduce_items<Op, Acc, double, Out>(a, i0, i1);
      default:
        unsupported_dtype("reduce", a.in);
    }
  };
  switch (a.out) {
    case DType::float32:
      return with_input.template operator()<float, float>();
    case DType::float16:
      return with_input.template operator()<float, Half>();
    case DType::bfloat16:
      return with_input.template operator()<float, BFloat16>();
    case DType::float64:
      return with_input.template operator()<double, double>();
    case DType::int64:
      if (a.in == DType::int32) return reduce_items<Op, int64_t, int32_t, int64_t>(a, i0, i1);
      if (a.in == DType::int64) return reduce_items<Op, int64_t, int64_t, int64_t>(a, i0, i1);
      unsupported_dtype("reduce", a.in);
    default:
      unsupported_dtype("reduce", a.out);
  }
}

void reduce_kernel(const ReduceArgs& a, int64_t i0, int64_t i1) {
  if (a.op == ReduceOp::sum) {
    reduce_with<SumOp>(a, i0, i1);
  } else {
    reduce_with<ProdOp>(a, i0, i1);
  }
}

}  // namespace
}  // namespace tileops::cpu
