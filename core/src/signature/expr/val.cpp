#include "signature/expr/val.hpp"

#include <sstream>

namespace tileops::expr {

std::string val_str(const Val& v) {
  switch (v.tag) {
    case Val::Tag::unset: return "?";
    case Val::Tag::none: return "None";
    case Val::Tag::boolean: return v.b ? "true" : "false";
    case Val::Tag::integer: return std::to_string(v.i);
    case Val::Tag::real: {
      std::ostringstream os;
      os << v.f;
      return os.str();
    }
    case Val::Tag::str: return "'" + std::string(v.s) + "'";
    case Val::Tag::dtype: return std::string(dtype_name(v.d));
    case Val::Tag::list: return shape_str(v.list);
    case Val::Tag::device: return v.dev->str();
  }
  return "?";
}

bool val_equal(const Val& a, const Val& b) {
  const bool a_num = a.tag == Val::Tag::integer || a.tag == Val::Tag::real;
  const bool b_num = b.tag == Val::Tag::integer || b.tag == Val::Tag::real;
  if (a_num && b_num) {
    if (a.tag == Val::Tag::integer && b.tag == Val::Tag::integer) return a.i == b.i;
    return a.number() == b.number();
  }
  if (a.tag == Val::Tag::dtype && b.tag == Val::Tag::str) return dtype_name(a.d) == b.s;
  if (a.tag == Val::Tag::str && b.tag == Val::Tag::dtype) return dtype_name(b.d) == a.s;
  if (a.tag != b.tag) return false;
  switch (a.tag) {
    case Val::Tag::unset:
    case Val::Tag::none: return true;
    case Val::Tag::boolean: return a.b == b.b;
    case Val::Tag::str: return a.s == b.s;
    case Val::Tag::dtype: return a.d == b.d;
    case Val::Tag::list: return a.list == b.list;
    case Val::Tag::device: return *a.dev == *b.dev;
    default: return false;
  }
}

Val val_from_value(const Value& value) {
  switch (value.index()) {
    case 0: return Val::none();
    case 1: return Val::boolean(std::get<bool>(value));
    case 2: return Val::integer(std::get<std::int64_t>(value));
    case 3: return Val::real(std::get<double>(value));
    case 4: return Val::str(std::get<std::string>(value));
    case 5: return Val::dtype(std::get<DType>(value));
    case 6: return Val::shape(std::get<std::vector<std::int64_t>>(value));
    case 7: return Val::device(std::get<Device>(value));
    default: return Val();
  }
}

Value value_from_val(const Val& v) {
  switch (v.tag) {
    case Val::Tag::boolean: return v.b;
    case Val::Tag::integer: return v.i;
    case Val::Tag::real: return v.f;
    case Val::Tag::str: return std::string(v.s);
    case Val::Tag::dtype: return v.d;
    case Val::Tag::list: return std::vector<std::int64_t>(v.list.begin(), v.list.end());
    case Val::Tag::device: return *v.dev;
    default: return std::monostate{};
  }
}

void assign_from_index_value(Val& dst, const IndexValue& value) {
  switch (value.index()) {
    case 0: dst.tag = Val::Tag::none; return;
    case 1: dst.tag = Val::Tag::boolean; dst.b = std::get<bool>(value); return;
    case 2: dst.tag = Val::Tag::integer; dst.i = std::get<std::int64_t>(value); return;
    case 3: dst.tag = Val::Tag::real; dst.f = std::get<double>(value); return;
    case 4: dst.tag = Val::Tag::str; dst.s = std::get<std::string>(value); return;
    case 5: dst.tag = Val::Tag::dtype; dst.d = std::get<DType>(value); return;
    case 6: dst.set_shape(std::get<Shape>(value)); return;
    case 7: dst.tag = Val::Tag::device; dst.dev = std::get<Device>(value); return;
    default: dst.tag = Val::Tag::unset; return;
  }
}

AsIndexValue::operator IndexValue() const {
  switch (v.tag) {
    case Val::Tag::boolean: return IndexValue(std::in_place_type<bool>, v.b);
    case Val::Tag::integer: return IndexValue(std::in_place_type<std::int64_t>, v.i);
    case Val::Tag::real: return IndexValue(std::in_place_type<double>, v.f);
    case Val::Tag::str: return IndexValue(std::in_place_type<std::string>, v.s);
    case Val::Tag::dtype: return IndexValue(std::in_place_type<DType>, v.d);
    case Val::Tag::list: return IndexValue(std::in_place_type<Shape>, v.list);
    case Val::Tag::device: return IndexValue(std::in_place_type<Device>, *v.dev);
    default: return IndexValue();
  }
}

}  // namespace tileops::expr
