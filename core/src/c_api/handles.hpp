// What the C API's opaque handles hold, and the helpers every C entry point shares: the
// exception barrier that turns a C++ exception into a tileops_status, and the checks of what
// a C caller passes in.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "tileops/c_api.h"
#include "tileops/op.hpp"
#include "tileops/tensor.hpp"
#include "tileops/value.hpp"

struct tileops_status {
  int kind;
  std::string message;
};

struct tileops_tensor {
  tileops::Tensor tensor;
  std::string device_type;  // the NUL-terminated name tileops_tensor_info points at
};

struct tileops_params {
  tileops::ParamMap params;
};

struct tileops_op {
  std::unique_ptr<tileops::Op> op;
};

namespace tileops::c_api {

// The status of the exception in flight (call from a catch block): its kind by its most derived
// class in the error family; a std::bad_alloc is an OutOfMemoryError, any other exception a
// plain Error. Never throws: without memory for the status, a static one.
tileops_status* current_exception_status() noexcept;

// Runs `body`, returning NULL, or the status of what it threw.
template <class Body>
tileops_status* guarded(Body&& body) noexcept {
  try {
    body();
    return nullptr;
  } catch (...) {
    return current_exception_status();
  }
}

// `text` as a string view. Throws TypeError naming `what` for NULL, ValueError when it is
// longer than TILEOPS_MAX_NAME_LENGTH bytes.
std::string_view checked_string(const char* text, std::string_view what);

// Throws TypeError naming `what` when `pointer` is NULL.
void require_pointer(const void* pointer, std::string_view what);

// Throws TypeError unless a struct the library reads, of `given` bytes, is one of its
// versions: from `first` (the first version's size) to `current` (this library's).
void check_struct_size(std::size_t given, std::size_t first, std::size_t current, std::string_view what);

// Throws TypeError unless a struct the library fills, of `given` bytes, holds at least the
// first version's `first` bytes (a larger one, from a newer header, is filled up to `first`).
void check_output_struct_size(std::size_t given, std::size_t first, std::string_view what);

// `text` copied into memory tileops_string_free releases. Throws OutOfMemoryError.
char* owned_string(const std::string& text);

// A new tensor handle holding `tensor`.
tileops_tensor* new_tensor_handle(Tensor tensor);

}  // namespace tileops::c_api
