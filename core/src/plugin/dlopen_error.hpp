// dlopen's failure text made readable: C++ symbol names demangled.
#pragma once

#include <string>


namespace tileops::plugin {

// `why` (dlerror()'s text) with the mangled name after each "undefined symbol: " followed by its
// demangled form: "undefined symbol: tileops::foo(int) (_ZN7tileops3fooEi)". Names that are not
// mangled C++ names (C functions) are left as they are.
std::string readable_dlopen_error(const std::string& why);

}  // namespace tileops::plugin
