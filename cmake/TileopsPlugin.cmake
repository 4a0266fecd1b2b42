# tileops_add_plugin(<name> SOURCES <files...>) builds libtileops_<name>.so, a plugin the core
# loads at run time, into the plugin directory of the build tree and installs it into the
# plugin directory of the install tree. Available to out-of-tree plugins through
# find_package(tileops).
function(tileops_add_plugin name)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  set(target tileops_${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE tileops::tileops)
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME tileops_${name}
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    BUILD_RPATH_USE_ORIGIN ON
    INSTALL_RPATH "$ORIGIN/../..")
  if(DEFINED TILEOPS_PLUGIN_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${TILEOPS_PLUGIN_OUTPUT_DIRECTORY})
  endif()
  if(DEFINED TILEOPS_PLUGIN_INSTALL_DIR)
    install(TARGETS ${target} LIBRARY DESTINATION ${TILEOPS_PLUGIN_INSTALL_DIR})
  endif()
endfunction()
