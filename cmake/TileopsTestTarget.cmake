# tileops_test_target(<target> [PRECOMPILE <header>...]) sets how a doctest suite is compiled.
# Test code is neither shipped nor measured: in the default RelWithDebInfo build it is compiled
# at -O1 with line tables, about half the time of -O2 -g, while the code it tests keeps -O2.
# The headers given to PRECOMPILE (those most of the suite's files include) are parsed once
# for the whole suite; the file that defines doctest's main() is compiled without them.
function(tileops_test_target target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "PRECOMPILE")
  target_compile_options(${target} PRIVATE "$<$<CONFIG:RelWithDebInfo>:-O1;-g1>")
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
