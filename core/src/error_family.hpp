// The tileops error family as one list: what names a caught error's kind (error_kind, the C API's
// statuses) and what re-creates an error of the same kind with a new message
// (rethrow_with_where). A class added to the family is added to this list, nowhere else.
#pragma once

#include <exception>
#include <string>
#include <string_view>

#include "tileops/errors.hpp"

namespace tileops {

struct ErrorClass {
  std::string_view name;                   // the class's name without namespace: "ValueError"
  bool (*is_instance)(const Error& e);     // whether `e` is of this class or derives from it
  // An error of this class whose what() is `message`; `original` (an instance of the class)
  // lends whatever else the class carries, such as a ManifestError's problems.
  std::exception_ptr (*with_message)(const Error& original, const std::string& message);
};

// The entry of `e`'s most derived class in the family.
const ErrorClass& error_class_of(const Error& e);

}  // namespace tileops
