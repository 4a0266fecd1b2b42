# Ops defined by their manifests (docs/writing-an-op.md). Installed with the package.
#
#   tileops_add_ops(<target> MANIFESTS <file.yaml>... [NAMESPACE <ns>] [INCLUDE_PREFIX <dir>])
#
# Runs tileops-opgen over the manifests at build time: each <file>.yaml becomes the header
# <INCLUDE_PREFIX>/<file>.hpp (INCLUDE_PREFIX defaults to "<target>/ops", NAMESPACE to <target>)
# declaring the ops' classes, which <target>'s sources include; the sources define each op's
# op_class() and forward(). The headers are regenerated when a manifest changes.
#
# tileops_generate_ops(<name> MANIFESTS ... OUT_DIR <dir> INCLUDE_PREFIX <p> NAMESPACE <ns>
#                      [EXPORT_MACRO <m> EXPORT_INCLUDE <h>] [CATALOG <file>])
# is the step underneath: a custom target <name> that writes the headers into OUT_DIR.
include_guard(GLOBAL)

function(tileops_generate_ops name)
  cmake_parse_arguments(PARSE_ARGV 1 GEN "" "OUT_DIR;INCLUDE_PREFIX;NAMESPACE;EXPORT_MACRO;EXPORT_INCLUDE;CATALOG"
                        "MANIFESTS")
  if(NOT GEN_MANIFESTS OR NOT GEN_OUT_DIR)
    message(FATAL_ERROR "tileops_generate_ops(${name}): MANIFESTS and OUT_DIR are required")
  endif()
  set(headers "")
  foreach(manifest IN LISTS GEN_MANIFESTS)
    get_filename_component(stem "${manifest}" NAME_WE)
    list(APPEND headers ${GEN_OUT_DIR}/${stem}.hpp)
  endforeach()
  set(args --out-dir ${GEN_OUT_DIR} --include-prefix ${GEN_INCLUDE_PREFIX} --namespace ${GEN_NAMESPACE})
  if(GEN_EXPORT_MACRO)
    list(APPEND args --export-macro ${GEN_EXPORT_MACRO} --export-include ${GEN_EXPORT_INCLUDE})
  endif()
  if(GEN_CATALOG)
    list(APPEND args --catalog ${GEN_CATALOG})
    list(APPEND headers ${GEN_CATALOG})
  endif()
  set(stamp ${CMAKE_CURRENT_BINARY_DIR}/${name}.stamp)
  # The tool rewrites a header only when its text changes (BYPRODUCTS lets Ninja notice).
  add_custom_command(
    OUTPUT ${stamp}
    BYPRODUCTS ${headers}
    COMMAND $<TARGET_FILE:tileops::opgen> ${args} ${GEN_MANIFESTS}
    COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
    DEPENDS $<TARGET_FILE:tileops::opgen> ${GEN_MANIFESTS}
    COMMENT "Generating the op classes of ${name}"
    VERBATIM)
  add_custom_target(${name} DEPENDS ${stamp})
endfunction()

function(tileops_add_ops target)
  cmake_parse_arguments(PARSE_ARGV 1 OPS "" "NAMESPACE;INCLUDE_PREFIX" "MANIFESTS")
  if(NOT OPS_MANIFESTS)
    message(FATAL_ERROR "tileops_add_ops(${target}): MANIFESTS is required")
  endif()
  if(NOT OPS_NAMESPACE)
    set(OPS_NAMESPACE ${target})
  endif()
  if(NOT OPS_INCLUDE_PREFIX)
    set(OPS_INCLUDE_PREFIX ${target}/ops)
  endif()
  set(manifests "")
  foreach(manifest IN LISTS OPS_MANIFESTS)
    get_filename_component(abs "${manifest}" ABSOLUTE)
    list(APPEND manifests ${abs})
  endforeach()
  set(root ${CMAKE_CURRENT_BINARY_DIR}/${target}_ops)
  tileops_generate_ops(${target}_op_classes
    MANIFESTS ${manifests}
    OUT_DIR ${root}/${OPS_INCLUDE_PREFIX}
    INCLUDE_PREFIX ${OPS_INCLUDE_PREFIX}
    NAMESPACE ${OPS_NAMESPACE})
  add_dependencies(${target} ${target}_op_classes)
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${root}>)
endfunction()
