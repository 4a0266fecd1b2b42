#include "validate.hpp"

#include <stdexcept>

#include "kernel_table.hpp"
#include "tileops/checked.hpp"

namespace tileops::cpu {

std::string dtype_label(DType dtype) {
  switch (dtype) {
    case DType::bool_:
      return "bool";
    case DType::int8:
      return "int8";
    case DType::uint8:
      return "uint8";
    case DType::int32:
      return "int32";
    case DType::int64:
      return "int64";
    case DType::float16:
      return "float16";
    case DType::bfloat16:
      return "bfloat16";
    case DType::float32:
      return "float32";
    case DType::float64:
      return "float64";
  }
  return "dtype " + std::to_string(static_cast<int>(dtype));
}

void check_dtype(const char* kernel, DType dtype, std::initializer_list<DType> allowed) {
  for (DType d : allowed) {
    if (d == dtype) return;
  }
  std::string names;
  for (DType d : allowed) names += (names.empty() ? "" : ", ") + dtype_label(d);
  throw std::invalid_argument(std::string(kernel) + ": dtype " + dtype_label(dtype) +
                              " is not supported; supported: " + names);
}

void check_float_dtype(const char* kernel, DType dtype) {
  check_dtype(kernel, dtype, {DType::float32, DType::float16, DType::bfloat16});
}

void check_sizes(const char* kernel, std::initializer_list<int64_t> sizes) {
  for (int64_t size : sizes) {
    if (size < 0) {
      throw std::invalid_argument(std::string(kernel) + ": size " + std::to_string(size) +
                                  " is negative");
    }
  }
}

void check_buffer(const char* kernel, const char* name, const void* buffer, int64_t elements) {
  if (buffer == nullptr && elements > 0) {
    throw std::invalid_argument(std::string(kernel) + ": buffer '" + name + "' is null");
  }
}

int64_t checked_product(const char* kernel, int64_t a, int64_t b) {
  int64_t product = 0;
  if (!mul_fits(a, b, product)) {
    throw std::invalid_argument(std::string(kernel) + ": " + std::to_string(a) + " x " +
                                std::to_string(b) + " elements overflow int64");
  }
  return product;
}

void unsupported_dtype(const char* kernel, DType dtype) {
  throw std::invalid_argument(std::string(kernel) + ": no kernel for dtype " + dtype_label(dtype));
}

}  // namespace tileops::cpu
