# Ops defined by their manifests (docs/writing-an-op.md). Installed with the package.
#
#   tileops_add_ops(<target> MANIFESTS <file.yaml>... [NAMESPACE <ns>] [INCLUDE_PREFIX <dir>])
#
# Runs tileops-opgen over the manifests at build time. Each <file>.yaml becomes
#   <INCLUDE_PREFIX>/<file>.hpp           the ops' classes (INCLUDE_PREFIX defaults to "<target>/ops")
#   <INCLUDE_PREFIX>/kernels/<file>.hpp   their kernel interfaces, namespace <NAMESPACE>::ops
#   <file>_reference.hpp                  their reference kernels' classes, namespace <NAMESPACE>::ref
#   <file>_op_classes.cpp                 each op's op_class() and the manifest's text, compiled
#                                         into <target>: the program needs no manifest file at
#                                         run time
# (NAMESPACE defaults to <target>). <target>'s sources define each op's forward() and its
# reference kernels' forward(), including <file>_reference.hpp. Everything is regenerated when a
# manifest changes.
#
# tileops_generate_ops(<name> MANIFESTS ... OUT_DIR <dir> INCLUDE_PREFIX <p> KERNELS_OUT_DIR <dir>
#                      KERNELS_PREFIX <p> INTERNAL_DIR <dir> NAMESPACE <ns> SOURCES_VAR <var>
#                      [EXPORT_MACRO <m> EXPORT_INCLUDE <h>] [CATALOG <file>] [EMBED_MANIFESTS])
# is the step underneath: a custom target <name> that writes the files, and in <var> the
# generated sources to compile.
include_guard(GLOBAL)

function(tileops_generate_ops name)
  cmake_parse_arguments(PARSE_ARGV 1 GEN "EMBED_MANIFESTS"
    "OUT_DIR;INCLUDE_PREFIX;KERNELS_OUT_DIR;KERNELS_PREFIX;INTERNAL_DIR;NAMESPACE;SOURCES_VAR;EXPORT_MACRO;EXPORT_INCLUDE;CATALOG"
    "MANIFESTS")
  foreach(required MANIFESTS OUT_DIR KERNELS_OUT_DIR KERNELS_PREFIX INTERNAL_DIR SOURCES_VAR)
    if(NOT GEN_${required})
      message(FATAL_ERROR "tileops_generate_ops(${name}): ${required} is required")
    endif()
  endforeach()
  set(headers "")
  set(sources "")
  foreach(manifest IN LISTS GEN_MANIFESTS)
    get_filename_component(stem "${manifest}" NAME_WE)
    list(APPEND headers ${GEN_OUT_DIR}/${stem}.hpp ${GEN_KERNELS_OUT_DIR}/${stem}.hpp
         ${GEN_INTERNAL_DIR}/${stem}_reference.hpp)
    list(APPEND sources ${GEN_INTERNAL_DIR}/${stem}_op_classes.cpp)
  endforeach()
  set(args --out-dir ${GEN_OUT_DIR} --include-prefix ${GEN_INCLUDE_PREFIX} --kernels-out-dir ${GEN_KERNELS_OUT_DIR}
           --kernels-prefix ${GEN_KERNELS_PREFIX} --internal-dir ${GEN_INTERNAL_DIR} --namespace ${GEN_NAMESPACE})
  if(GEN_EXPORT_MACRO)
    list(APPEND args --export-macro ${GEN_EXPORT_MACRO} --export-include ${GEN_EXPORT_INCLUDE})
  endif()
  if(GEN_EMBED_MANIFESTS)
    list(APPEND args --embed-manifests)
  endif()
  if(GEN_CATALOG)
    list(APPEND args --catalog ${GEN_CATALOG})
    list(APPEND headers ${GEN_CATALOG})
  endif()
  set(stamp ${CMAKE_CURRENT_BINARY_DIR}/${name}.stamp)
  # The tool rewrites a header only when its text changes (BYPRODUCTS lets Ninja notice).
  add_custom_command(
    OUTPUT ${stamp}
    BYPRODUCTS ${headers} ${sources}
    COMMAND $<TARGET_FILE:tileops::opgen> ${args} ${GEN_MANIFESTS}
    COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
    DEPENDS $<TARGET_FILE:tileops::opgen> ${GEN_MANIFESTS}
    COMMENT "Generating the op classes of ${name}"
    VERBATIM)
  add_custom_target(${name} DEPENDS ${stamp})
  set(${GEN_SOURCES_VAR} ${sources} PARENT_SCOPE)
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
    KERNELS_OUT_DIR ${root}/${OPS_INCLUDE_PREFIX}/kernels
    KERNELS_PREFIX ${OPS_INCLUDE_PREFIX}/kernels
    INTERNAL_DIR ${root}/internal
    NAMESPACE ${OPS_NAMESPACE}
    SOURCES_VAR op_class_sources
    EMBED_MANIFESTS)
  add_dependencies(${target} ${target}_op_classes)
  target_sources(${target} PRIVATE ${op_class_sources})
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${root}> PRIVATE ${root}/internal)
endfunction()
