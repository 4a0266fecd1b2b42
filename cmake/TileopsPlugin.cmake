# tileops_add_plugin(<name> SOURCES <files...> [TARGET <target>] [OUTPUT_DIRECTORY <dir>] [NO_INSTALL])
# builds libtileops_<name>.so, a plugin the core loads at run time. Available to out-of-tree
# plugins through find_package(tileops).
#   TARGET            the CMake target's name (default tileops_<name>)
#   OUTPUT_DIRECTORY  where the library is built (default: the build tree's plugin directory
#                     inside the tileops build, the project's library directory otherwise)
#   NO_INSTALL        do not install it (default: into the plugin directory of the install tree,
#                     <libdir>/tileops/plugins, where the core finds it relative to itself)
# The plugin is linked with --no-undefined: a symbol that none of the libraries it links defines
# fails the build instead of the load (except in Clang sanitizer builds, whose runtimes live in
# the executable and resolve at load).
function(tileops_add_plugin name)
  cmake_parse_arguments(ARG "NO_INSTALL" "TARGET;OUTPUT_DIRECTORY" "SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "tileops_add_plugin(${name}): SOURCES is required")
  endif()
  set(target tileops_${name})
  if(ARG_TARGET)
    set(target ${ARG_TARGET})
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE tileops::tileops)
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    SUFFIX ".so"
    OUTPUT_NAME tileops_${name}
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    BUILD_RPATH_USE_ORIGIN ON
    INSTALL_RPATH "$ORIGIN/../..")
  set(_tileops_flags "${CMAKE_CXX_FLAGS} ${CMAKE_MODULE_LINKER_FLAGS}")
  if(NOT (CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND (_tileops_flags MATCHES "-fsanitize" OR TILEOPS_SANITIZE)))
    target_link_options(${target} PRIVATE LINKER:--no-undefined)
  endif()
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  elseif(DEFINED TILEOPS_PLUGIN_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${TILEOPS_PLUGIN_OUTPUT_DIRECTORY})
  endif()
  if(NOT ARG_NO_INSTALL AND DEFINED TILEOPS_PLUGIN_INSTALL_DIR)
    install(TARGETS ${target} LIBRARY DESTINATION ${TILEOPS_PLUGIN_INSTALL_DIR})
  endif()
endfunction()
