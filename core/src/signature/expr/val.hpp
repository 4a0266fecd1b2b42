// Run-time values of manifest expressions. A Val lives on the stack of a check: shapes up to
// rank 6 are stored inline and strings are views into the plan or the construction state, so
// evaluating an expression allocates nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tileops/device.hpp"
#include "tileops/dtype.hpp"
#include "tileops/shape.hpp"
#include "tileops/value.hpp"

namespace tileops::expr {

struct Val {
  enum class Tag : std::uint8_t { unset, none, boolean, integer, real, str, dtype, list, device };

  Tag tag = Tag::unset;  // unset: an index not solved (yet) on this call
  DType d = DType::float32;
  bool b = false;
  std::int64_t i = 0;
  double f = 0;
  std::string_view s;
  Shape list;
  std::optional<Device> dev;

  static Val none() { return with(Tag::none); }
  static Val boolean(bool v) { Val x = with(Tag::boolean); x.b = v; return x; }
  static Val integer(std::int64_t v) { Val x = with(Tag::integer); x.i = v; return x; }
  static Val real(double v) { Val x = with(Tag::real); x.f = v; return x; }
  static Val str(std::string_view v) { Val x = with(Tag::str); x.s = v; return x; }
  static Val dtype(DType v) { Val x = with(Tag::dtype); x.d = v; return x; }
  static Val shape(ShapeView v) { Val x = with(Tag::list); x.list.assign(v.begin(), v.end()); return x; }
  static Val device(const Device& v) { Val x = with(Tag::device); x.dev = v; return x; }

  // In-place setters: a slot of the check state takes a value without a temporary Val.
  void set_integer(std::int64_t v) { tag = Tag::integer; i = v; }
  void set_real(double v) { tag = Tag::real; f = v; }
  void set_dtype(DType v) { tag = Tag::dtype; d = v; }
  void set_shape(ShapeView v) { tag = Tag::list; list.assign(v.begin(), v.end()); }

  bool known() const { return tag != Tag::unset; }
  bool is_none() const { return tag == Tag::none; }
  // The numeric value as a double (integer or real).
  double number() const { return tag == Tag::integer ? static_cast<double>(i) : f; }

 private:
  static Val with(Tag t) { Val x; x.tag = t; return x; }
};

// "None", "true", "3", "1e-05", "'silu'", "float16", "[2, 3]", "cuda:0"; "?" when unset.
std::string val_str(const Val& v);

// Structural equality; an integer equals a real of the same value; a dtype equals a string
// naming it.
bool val_equal(const Val& a, const Val& b);

// The Val of a parameter value. Strings become views into `value`, which must outlive the Val.
// A tensor becomes unset (tensors are not expression values).
Val val_from_value(const Value& value);

// The Value a Val stands for (unset becomes None).
Value value_from_val(const Val& v);

// Sets `dst` to the Val of a recorded index value in place (no temporary). Strings become
// views into `value`, which must outlive the Val.
void assign_from_index_value(Val& dst, const IndexValue& value);

// Converts to the IndexValue a Val stands for (unset becomes None). Copy-initializing an
// IndexValue from it builds the value in place, with no temporary to move:
// `records.emplace_back(name, AsIndexValue{v})`.
struct AsIndexValue {
  const Val& v;
  operator IndexValue() const;
};

}  // namespace tileops::expr
