// The checks of what a C caller passes in, and the memory the C API hands out.
#include <cstring>
#include <new>

#include "c_api/handles.hpp"
#include "tileops/errors.hpp"

namespace tileops::c_api {

std::string_view checked_string(const char* text, std::string_view what) {
  if (text == nullptr) throw TypeError(std::string(what) + " is NULL; expected a NUL-terminated string");
  const std::size_t length = strnlen(text, TILEOPS_MAX_NAME_LENGTH + 1);
  if (length > TILEOPS_MAX_NAME_LENGTH) {
    throw ValueError(std::string(what) + " is longer than " + std::to_string(TILEOPS_MAX_NAME_LENGTH) +
                     " bytes, the longest string argument the C API takes");
  }
  return {text, length};
}

void require_pointer(const void* pointer, std::string_view what) {
  if (pointer == nullptr) throw TypeError(std::string(what) + " is NULL");
}

void check_struct_size(std::size_t given, std::size_t first, std::size_t current, std::string_view what) {
  if (given < first || given > current) {
    throw TypeError(std::string(what) + ".struct_size is " + std::to_string(given) + "; this library reads sizes " +
                    std::to_string(first) + " to " + std::to_string(current) +
                    " (a caller built against a newer header needs a newer library)");
  }
}

void check_output_struct_size(std::size_t given, std::size_t first, std::string_view what) {
  if (given < first) {
    throw TypeError(std::string(what) + ".struct_size is " + std::to_string(given) + "; this library fills at least " +
                    std::to_string(first) + " bytes");
  }
}

char* owned_string(const std::string& text) {
  char* copy = new (std::nothrow) char[text.size() + 1];
  if (copy == nullptr) {
    throw OutOfMemoryError("cpu: cannot allocate " + std::to_string(text.size() + 1) + " bytes for a string");
  }
  std::memcpy(copy, text.c_str(), text.size() + 1);
  return copy;
}

tileops_tensor* new_tensor_handle(Tensor tensor) {
  std::string device_type(tensor.device().type().name());
  return new tileops_tensor{std::move(tensor), std::move(device_type)};
}

}  // namespace tileops::c_api

extern "C" void tileops_string_free(char* text) { delete[] text; }
