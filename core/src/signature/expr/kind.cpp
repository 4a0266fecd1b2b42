#include "signature/expr/kind.hpp"

namespace tileops::expr {

std::string kind_name(Kind kind) {
  std::string base;
  switch (kind.base) {
    case Base::Bool: base = "Bool"; break;
    case Base::Int: base = "Int"; break;
    case Base::Float: base = "Float"; break;
    case Base::Num: base = "Int | Float"; break;
    case Base::Str: base = "Str"; break;
    case Base::DType: base = "DType"; break;
    case Base::IntList: base = "Seq[Int]"; break;
    case Base::Axes: base = "Int | Seq[Int]"; break;
    case Base::Device: base = "Device"; break;
    case Base::None: base = "None"; break;
    case Base::Tensor: base = "Tensor"; break;
  }
  return kind.maybe ? "Maybe[" + base + "]" : base;
}

bool kind_accepts(Kind want, Kind have) {
  if (have.base == Base::None) return want.maybe || want.base == Base::None;
  if (have.maybe && !want.maybe) return false;
  if (want.base == have.base) return true;
  switch (want.base) {
    case Base::Float: return have.base == Base::Int;
    case Base::Num: return have.base == Base::Int || have.base == Base::Float;
    case Base::Axes: return have.base == Base::Int || have.base == Base::IntList;
    default: return false;
  }
}

}  // namespace tileops::expr
