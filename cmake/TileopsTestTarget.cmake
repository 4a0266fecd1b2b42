# tileops_test_target(<target> [PRECOMPILE <header>...]) sets how a doctest suite is compiled.
# Test code is neither shipped nor measured: in the default RelWithDebInfo build it is compiled
# at -O1 with line tables, about half the time of -O2 -g, while the code it tests keeps -O2.
# The headers given to PRECOMPILE (those most of the suite's files include) are parsed once
# for the whole suite; the file that defines doctest's main() is compiled without them.
function(tileops_test_target target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "PRECOMPILE")
  target_compile_options(${target} PRIVATE "$<$<CONFIG:RelWithDebInfo>:-O1;-g1>")
  # At -O1 GCC 12 reports memcpy inside std::string and boost::container moves as out of bounds
  # or overflowing (false positives of -Warray-bounds and -Wstringop-*, in library headers).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE "$<$<CONFIG:RelWithDebInfo>:-Wno-array-bounds;-Wno-stringop-overflow;-Wno-stringop-overread>")
  endif()
  if(arg_PRECOMPILE)
    target_precompile_headers(${target} PRIVATE ${arg_PRECOMPILE})
    get_target_property(sources ${target} SOURCES)
    foreach(source ${sources})
      if(source MATCHES "(^|/)main\\.cpp$")
        set_source_files_properties(${source} TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
      endif()
    endforeach()
  endif()
endfunction()
