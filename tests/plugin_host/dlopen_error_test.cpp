#include <doctest/doctest.h>

#include "plugin/dlopen_error.hpp"

using tileops::plugin::readable_dlopen_error;

TEST_CASE("a plugin's undefined-symbol failure shows the demangled C++ name beside the mangled one") {
  CHECK(readable_dlopen_error("/p/libtileops_x.so: undefined symbol: _ZN7tileops15defined_nowhereEi") ==
        "/p/libtileops_x.so: undefined symbol: tileops::defined_nowhere(int) (_ZN7tileops15defined_nowhereEi)");
  CHECK(readable_dlopen_error("/p/libtileops_x.so: undefined symbol: cblas_sgemm") ==
        "/p/libtileops_x.so: undefined symbol: cblas_sgemm");
  CHECK(readable_dlopen_error("/p/libtileops_x.so: cannot open shared object file") ==
        "/p/libtileops_x.so: cannot open shared object file");
}
