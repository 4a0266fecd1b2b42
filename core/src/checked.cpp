#include "tileops/checked.hpp"

#include <string>

#include "tileops/errors.hpp"

namespace tileops {

void throw_size_overflow(std::string_view what, std::int64_t a, char op, std::int64_t b) {
  throw ValueError(std::string(what) + ": " + std::to_string(a) + " " + op + " " + std::to_string(b) +
                   " does not fit in a signed 64-bit integer (limit " + std::to_string(kMaxTensorBytes) + ")");
}

}  // namespace tileops
