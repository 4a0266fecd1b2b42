# TILEOPS_BUILD_FUZZERS builds the libFuzzer targets of fuzz/. libFuzzer comes with clang only;
# every target of the build gets libFuzzer's coverage instrumentation and AddressSanitizer with
# UndefinedBehaviorSanitizer (the fuzzers bring their own sanitizers: TILEOPS_SANITIZE stays
# empty).
if(NOT TILEOPS_BUILD_FUZZERS)
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "TILEOPS_BUILD_FUZZERS needs clang (libFuzzer), but the C++ compiler is "
                      "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}; configure with "
                      "-DCMAKE_CXX_COMPILER=clang++-16 -DCMAKE_C_COMPILER=clang-16 (scripts/fuzz.sh does)")
endif()
if(NOT TILEOPS_SANITIZE STREQUAL "")
  message(FATAL_ERROR "TILEOPS_BUILD_FUZZERS instruments with address,undefined itself; "
                      "leave TILEOPS_SANITIZE empty (got '${TILEOPS_SANITIZE}')")
endif()
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                    -fno-omit-frame-pointer)
add_link_options(-fsanitize=address,undefined)
message(STATUS "tileops: fuzzers enabled (libFuzzer, address, undefined)")
