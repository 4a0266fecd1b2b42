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
message(STATUS "tileops: sanitizer ${TILEOPS_SANITIZE} enabled")
