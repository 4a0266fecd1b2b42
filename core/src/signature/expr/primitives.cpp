#include "signature/expr/primitives.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "tileops/errors.hpp"

namespace tileops::expr {
namespace {

constexpr Kind kBool{Base::Bool};
constexpr Kind kInt{Base::Int};
constexpr Kind kStr{Base::Str};
constexpr Kind kDType{Base::DType};
constexpr Kind kList{Base::IntList};
constexpr Kind kMaybeAxes{Base::Axes, true};
constexpr Kind kMaybeInt{Base::Int, true};
constexpr Kind kMaybeDType{Base::DType, true};

std::string ordinal(std::size_t i) { return "argument " + std::to_string(i + 1); }

void expect(std::span<const Kind> args, std::size_t i, Kind want) {
  if (i < args.size() && !kind_accepts(want, args[i])) {
    throw ValueError(ordinal(i) + " must be " + kind_name(want) + ", not " + kind_name(args[i]));
  }
}

// The axes `dim` names (an int, a list, or None for all), each normalized for `rank`.
Shape axes_of(const Val& dim, std::int64_t rank) {
  Shape axes;
  if (dim.tag == Val::Tag::none || (dim.tag == Val::Tag::list && dim.list.empty())) {
    for (std::int64_t a = 0; a < rank; ++a) axes.push_back(a);
    return axes;
  }
  if (dim.tag == Val::Tag::integer) {
    axes.push_back(normalize_axis(dim.i, rank));
    return axes;
  }
  for (std::int64_t d : dim.list) axes.push_back(normalize_axis(d, rank));
  return axes;
}

Val eval_prod(std::span<const Val> a) {
  std::int64_t p = 1;
  for (std::int64_t d : a[0].list) {
    if (__builtin_mul_overflow(p, d, &p)) throw ValueError("prod: the product of " + shape_str(a[0].list) + " overflows");
  }
  return Val::integer(p);
}

Val eval_sum(std::span<const Val> a) {
  std::int64_t s = 0;
  for (std::int64_t d : a[0].list) {
    if (__builtin_add_overflow(s, d, &s)) throw ValueError("sum: the sum of " + shape_str(a[0].list) + " overflows");
  }
  return Val::integer(s);
}

Val eval_len(std::span<const Val> a) { return Val::integer(static_cast<std::int64_t>(a[0].list.size())); }

template <bool kMax>
Val eval_extreme(std::span<const Val> a) {
  const char* name = kMax ? "max" : "min";
  Shape values;
  if (a.size() == 1) {
    values = a[0].list;
  } else {
    for (const Val& v : a) values.push_back(v.i);
  }
  if (values.empty()) throw ValueError(std::string(name) + ": the sequence is empty");
  return Val::integer(kMax ? *std::max_element(values.begin(), values.end())
                           : *std::min_element(values.begin(), values.end()));
}

Kind check_extreme(std::span<const Kind> a) {
  if (a.size() == 1) {
    expect(a, 0, kList);
  } else {
    for (std::size_t i = 0; i < a.size(); ++i) expect(a, i, kInt);
  }
  return kInt;
}

Val eval_broadcast(std::span<const Val> a) {
  std::size_t rank = 0;
  for (const Val& v : a) rank = std::max(rank, v.list.size());
  Val out = Val::shape({});
  out.list.assign(rank, 1);
  for (std::size_t k = 0; k < a.size(); ++k) {
    const Shape& s = a[k].list;
    const std::size_t lead = rank - s.size();
    for (std::size_t i = 0; i < s.size(); ++i) {
      std::int64_t& o = out.list[lead + i];
      if (s[i] == 1) continue;
      if (o == 1 || o == s[i]) {
        o = s[i];
        continue;
      }
      std::string shapes;
      for (std::size_t j = 0; j < a.size(); ++j) shapes += (j ? " and " : "") + shape_str(a[j].list);
      throw ValueError("broadcast: shapes " + shapes + " are not broadcastable (axis " +
                       std::to_string(static_cast<std::int64_t>(lead + i) - static_cast<std::int64_t>(rank)) +
                       ": " + std::to_string(o) + " vs " + std::to_string(s[i]) + ")");
    }
  }
  return out;
}

Kind check_broadcast(std::span<const Kind> a) {
  for (std::size_t i = 0; i < a.size(); ++i) expect(a, i, kList);
  return kList;
}

Val eval_per_axis(std::span<const Val> a) {
  const Val& v = a[0];
  const std::int64_t i = a[1].i;
  const std::int64_t n = a[2].i;
  if (v.tag == Val::Tag::list) {
    if (static_cast<std::int64_t>(v.list.size()) != n) {
      throw ValueError("per_axis: expected " + std::to_string(n) + " values, got " + shape_str(v.list));
    }
    if (i < 0 || i >= n) throw ValueError("per_axis: index " + std::to_string(i) + " is outside [0, " + std::to_string(n) + ")");
    return Val::integer(v.list[static_cast<std::size_t>(i)]);
  }
  if (v.tag == Val::Tag::integer) return v;
  if (a.size() > 3 && a[3].tag == Val::Tag::integer) return a[3];
  throw ValueError("per_axis: the value and its fallback are both None");
}

Kind check_per_axis(std::span<const Kind> a) {
  expect(a, 0, kMaybeAxes);
  expect(a, 1, kInt);
  expect(a, 2, kInt);
  expect(a, 3, kMaybeInt);
  return kInt;
}

Val eval_ceil_div(std::span<const Val> a) {
  if (a[1].i <= 0) throw ValueError("ceil_div: the divisor must be positive, got " + std::to_string(a[1].i));
  const std::int64_t q = a[0].i / a[1].i;
  return Val::integer(q + ((a[0].i % a[1].i) > 0 ? 1 : 0));
}

Kind check_int_int(std::span<const Kind> a) {
  expect(a, 0, kInt);
  expect(a, 1, kInt);
  return kInt;
}

Val eval_reduced(std::span<const Val> a) {
  const Shape& s = a[0].list;
  const auto rank = static_cast<std::int64_t>(s.size());
  const Shape axes = axes_of(a[1], rank);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (axes[i] == axes[j]) {
        throw ValueError("reduced: axis " + std::to_string(axes[i]) + " appears twice in dim " + val_str(a[1]));
      }
    }
  }
  Val out = Val::shape({});
  if (rank == 0) return out;
  for (std::int64_t d = 0; d < rank; ++d) {
    const bool reduce = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!reduce) {
      out.list.push_back(s[static_cast<std::size_t>(d)]);
    } else if (a[2].b) {
      out.list.push_back(1);
    }
  }
  return out;
}

Kind check_reduced(std::span<const Kind> a) {
  expect(a, 0, kList);
  expect(a, 1, kMaybeAxes);
  expect(a, 2, kBool);
  return kList;
}

Val eval_normalize_axis(std::span<const Val> a) { return Val::integer(normalize_axis(a[0].i, a[1].i)); }

Val eval_valid_axes(std::span<const Val> a) {
  try {
    axes_of(a[0], a[1].i);
  } catch (const ValueError&) {
    return Val::boolean(false);
  }
  return Val::boolean(true);
}

Val eval_unique_axes(std::span<const Val> a) {
  if (a[0].tag != Val::Tag::list) return Val::boolean(true);
  const Shape axes = axes_of(a[0], a[1].i);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (axes[i] == axes[j]) return Val::boolean(false);
    }
  }
  return Val::boolean(true);
}

Kind check_axes_rank(std::span<const Kind> a) {
  expect(a, 0, kMaybeAxes);
  expect(a, 1, kInt);
  return kBool;
}

Val eval_category(std::span<const Val> a) {
  switch (a[0].tag) {
    case Val::Tag::dtype: return Val::str(dtype_category(a[0].d));
    case Val::Tag::boolean: return Val::str("bool");
    case Val::Tag::integer: return Val::str("int");
    default: return Val::str("float");
  }
}

Kind check_category(std::span<const Kind> a) {
  const Kind k = a[0];
  if (k.maybe || !(k.base == Base::DType || k.base == Base::Bool || is_numeric(k))) {
    throw ValueError("argument 1 must be a DType or a scalar (Bool, Int, Float), not " + kind_name(k));
  }
  return kStr;
}

// The largest finite magnitude of a floating dtype.
double float_max(DType t) {
  switch (t) {
    case DType::float16: return 65504.0;
    case DType::bfloat16: return 3.3895313892515355e38;
    case DType::float32: return static_cast<double>(std::numeric_limits<float>::max());
    default: return std::numeric_limits<double>::max();
  }
}

void int_range(DType t, double& lo, double& hi) {
  switch (t) {
    case DType::bool_: lo = 0; hi = 1; break;
    case DType::int8: lo = -128; hi = 127; break;
    case DType::uint8: lo = 0; hi = 255; break;
    case DType::int32: lo = -2147483648.0; hi = 2147483647.0; break;
    default: lo = -9223372036854775808.0; hi = 9223372036854775807.0; break;
  }
}

Val eval_representable(std::span<const Val> a) {
  const Val& v = a[0];
  const DType t = a[1].d;
  if (is_floating(t)) {
    const double x = v.number();
    return Val::boolean(!std::isfinite(x) || std::fabs(x) <= float_max(t));
  }
  double lo = 0;
  double hi = 0;
  int_range(t, lo, hi);
  if (v.tag == Val::Tag::integer) {
    if (t == DType::int64) return Val::boolean(true);
    return Val::boolean(static_cast<double>(v.i) >= lo && static_cast<double>(v.i) <= hi);
  }
  const double x = v.number();
  return Val::boolean(std::isfinite(x) && std::trunc(x) == x && x >= lo && x <= hi);
}

Kind check_representable(std::span<const Kind> a) {
  if (!is_numeric(a[0]) && !(a[0].base == Base::Bool && !a[0].maybe)) {
    throw ValueError("argument 1 must be a scalar (Bool, Int, Float), not " + kind_name(a[0]));
  }
  expect(a, 1, kDType);
  return kBool;
}

Val eval_coalesce_dtype(std::span<const Val> a) { return a[0].tag == Val::Tag::none ? a[1] : a[0]; }

Kind check_coalesce_dtype(std::span<const Kind> a) {
  expect(a, 0, kMaybeDType);
  expect(a, 1, kDType);
  return kDType;
}

Val eval_promote_int_to_float(std::span<const Val> a) {
  return Val::dtype(is_integral(a[0].d) ? DType::float32 : a[0].d);
}

Val eval_sum_dtype(std::span<const Val> a) { return Val::dtype(is_floating(a[0].d) ? a[0].d : DType::int64); }

Kind check_dtype_to_dtype(std::span<const Kind> a) {
  expect(a, 0, kDType);
  return kDType;
}

Val eval_bits(std::span<const Val> a) { return Val::integer(dtype_bits(a[0].d)); }

Kind check_bits(std::span<const Kind> a) {
  expect(a, 0, kDType);
  return kInt;
}

Kind check_list_to_int(std::span<const Kind> a) {
  expect(a, 0, kList);
  return kInt;
}

Val eval_abs(std::span<const Val> a) {
  if (a[0].tag == Val::Tag::integer) {
    if (a[0].i == std::numeric_limits<std::int64_t>::min()) {
      throw ValueError("abs: |" + std::to_string(a[0].i) + "| overflows a 64-bit integer");
    }
    return Val::integer(a[0].i < 0 ? -a[0].i : a[0].i);
  }
  return Val::real(std::fabs(a[0].f));
}

Kind check_abs(std::span<const Kind> a) {
  if (!is_numeric(a[0])) throw ValueError("argument 1 must be Int | Float, not " + kind_name(a[0]));
  return a[0];
}

const Primitive kPrimitives[] = {
    {"abs", 1, 1, {}, check_abs, eval_abs},
    {"bits", 1, 1, {}, check_bits, eval_bits},
    {"broadcast", 1, -1, {}, check_broadcast, eval_broadcast},
    {"category", 1, 1, {}, check_category, eval_category},
    {"ceil_div", 2, 2, {}, check_int_int, eval_ceil_div},
    {"coalesce_dtype", 2, 2, {}, check_coalesce_dtype, eval_coalesce_dtype},
    {"len", 1, 1, {}, check_list_to_int, eval_len},
    {"max", 1, -1, {}, check_extreme, eval_extreme<true>},
    {"min", 1, -1, {}, check_extreme, eval_extreme<false>},
    {"normalize_axis", 2, 2, {}, check_int_int, eval_normalize_axis},
    {"per_axis", 3, 4, {"fallback"}, check_per_axis, eval_per_axis},
    {"prod", 1, 1, {}, check_list_to_int, eval_prod},
    {"promote_int_to_float", 1, 1, {}, check_dtype_to_dtype, eval_promote_int_to_float},
    {"reduced", 3, 3, {}, check_reduced, eval_reduced},
    {"representable", 2, 2, {}, check_representable, eval_representable},
    {"sum", 1, 1, {}, check_list_to_int, eval_sum},
    {"sum_dtype", 1, 1, {}, check_dtype_to_dtype, eval_sum_dtype},
    {"unique_axes", 2, 2, {}, check_axes_rank, eval_unique_axes},
    {"valid_axes", 2, 2, {}, check_axes_rank, eval_valid_axes},
};

}  // namespace

std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank) {
  if (rank < 0) throw ValueError("normalize_axis: rank " + std::to_string(rank) + " is negative");
  const std::int64_t lo = rank == 0 ? -1 : -rank;
  const std::int64_t hi = rank == 0 ? 1 : rank;
  if (axis < lo || axis >= hi) {
    throw ValueError("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  if (rank == 0) return 0;
  return axis < 0 ? axis + rank : axis;
}

int find_primitive(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kPrimitives); ++i) {
    if (kPrimitives[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

const Primitive& primitive(int id) { return kPrimitives[id]; }

std::string primitive_names() {
  std::string s = "bytes, present";
  for (const Primitive& p : kPrimitives) s += ", " + std::string(p.name);
  return s;
}

}  // namespace tileops::expr
