// Internal helpers of the reference kernels: calling a template with the C++ type of a
// DType, and converting elements to and from the accumulation type.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "tileops/dtype.hpp"
#include "tileops/errors.hpp"
#include "tileops/half.hpp"

namespace tileops::ref {

template <class T>
struct TypeTag {
  using type = T;
};

// Calls f(TypeTag<T>{}) with T the storage type of `dtype`.
template <class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::bool_: return f(TypeTag<bool>{});
    case DType::int8: return f(TypeTag<std::int8_t>{});
    case DType::uint8: return f(TypeTag<std::uint8_t>{});
    case DType::int32: return f(TypeTag<std::int32_t>{});
    case DType::int64: return f(TypeTag<std::int64_t>{});
    case DType::float16: return f(TypeTag<Half>{});
    case DType::bfloat16: return f(TypeTag<BFloat16>{});
    case DType::float32: return f(TypeTag<float>{});
    case DType::float64: return f(TypeTag<double>{});
  }
  throw TypeError("unknown dtype code " + std::to_string(static_cast<int>(dtype)));
}

// Widens an element to double (exact for every dtype but int64 beyond 2^53).
template <class T>
double load(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return static_cast<double>(static_cast<float>(v));
  } else {
    return static_cast<double>(v);
  }
}

// Narrows a double to an element: half types round through float, integers truncate.
template <class T>
T store(double v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else {
    return static_cast<T>(v);
  }
}

}  // namespace tileops::ref
