// How long the soak tests run: a few seconds by default, TILEOPS_SOAK_SECONDS=N for N seconds.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

namespace tileops::test {

inline double soak_seconds() {
  const char* v = std::getenv("TILEOPS_SOAK_SECONDS");
  if (v == nullptr || *v == '\0') return 3.0;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(s > 0 && s <= 86400)) {
    FAIL("TILEOPS_SOAK_SECONDS='" << std::string(v) << "' is not a duration: expected seconds in (0, 86400]");
  }
  return s;
}

}  // namespace tileops::test
