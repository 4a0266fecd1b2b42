// Argument checks shared by the public functions; each throws std::invalid_argument with a
// message that starts with the function's name.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "tileops/dtype.hpp"

namespace tileops::cpu {

std::string dtype_label(DType dtype);

// dtype is one of `allowed`.
void check_dtype(const char* kernel, DType dtype, std::initializer_list<DType> allowed);

// float32, float16 or bfloat16.
void check_float_dtype(const char* kernel, DType dtype);

// Every size is at least 0.
void check_sizes(const char* kernel, std::initializer_list<int64_t> sizes);

// A buffer that must be there whenever it has elements.
void check_buffer(const char* kernel, const char* name, const void* buffer, int64_t elements);

// a * b, or an exception naming the kernel when the product does not fit in int64_t.
int64_t checked_product(const char* kernel, int64_t a, int64_t b);

}  // namespace tileops::cpu
