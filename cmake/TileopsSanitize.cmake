# TILEOPS_SANITIZE instruments every target of the build: address, undefined, thread, or a
# comma-separated combination of address and undefined.
if(TILEOPS_SANITIZE STREQUAL "")
  return()
endif()
if(NOT TILEOPS_SANITIZE MATCHES "^(thread|(address|undefined)(,(address|undefined))?)$")
  message(FATAL_ERROR "TILEOPS_SANITIZE must be address, undefined, thread or address,undefined; "
                      "got '${TILEOPS_SANITIZE}'")
endif()
set(_flags -fsanitize=${TILEOPS_SANITIZE} -fno-omit-frame-pointer)
if(TILEOPS_SANITIZE MATCHES "undefined")
  list(APPEND _flags -fno-sanitize-recover=undefined)
endif()
# Host code only: nvcc takes no sanitizer flags, and device code cannot be instrumented.
add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${_flags}>")
add_link_options(-fsanitize=${TILEOPS_SANITIZE})
# clang's C driver links only UBSan's C runtime, but a C program linked against libtileops needs
# the C++ part too (the vptr and function-type checks inside the library), and that part needs
# the C++ standard library named on the command line.
if(TILEOPS_SANITIZE MATCHES "undefined")
  add_link_options("$<$<AND:$<LINK_LANGUAGE:C>,$<C_COMPILER_ID:Clang>>:-fsanitize-link-c++-runtime;-lstdc++>")
endif()
message(STATUS "tileops: sanitizer ${TILEOPS_SANITIZE} enabled")
