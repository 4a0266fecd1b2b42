# TILEOPS_BUILD_FUZZERS builds the libFuzzer targets of fuzz/. libFuzzer comes with clang only.
# Every target of the build gets libFuzzer's coverage instrumentation and AddressSanitizer with
# UndefinedBehaviorSanitizer: either through TILEOPS_SANITIZE=address,undefined, so that the test
# suites and the fuzzers share one instrumented build (scripts/sanitize.sh, scripts/fuzz.sh), or,
# with TILEOPS_SANITIZE empty, from here.
if(NOT TILEOPS_BUILD_FUZZERS)
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "TILEOPS_BUILD_FUZZERS needs clang (libFuzzer), but the C++ compiler is "
                      "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}; configure with "
                      "-DCMAKE_CXX_COMPILER=clang++-16 -DCMAKE_C_COMPILER=clang-16 (scripts/fuzz.sh does)")
endif()
if(TILEOPS_SANITIZE STREQUAL "")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
elseif(NOT TILEOPS_SANITIZE MATCHES "^(address,undefined|undefined,address)$")
  message(FATAL_ERROR "TILEOPS_BUILD_FUZZERS instruments with address,undefined; TILEOPS_SANITIZE "
                      "must be empty or address,undefined (got '${TILEOPS_SANITIZE}')")
endif()
add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link>")
message(STATUS "tileops: fuzzers enabled (libFuzzer, address, undefined)")
