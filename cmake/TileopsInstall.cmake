include(CMakePackageConfigHelpers)

# Installed: the core, the tileops program, the public headers (include/tileops/ only, the C
# API's among them), the CMake package, a pkg-config file and the Python package (python/).
# The demo embed_llama_block stays in the build tree.
install(TARGETS tileops EXPORT tileopsTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS tileops_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS tileops_opgen EXPORT tileopsTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY core/include/tileops DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/core/include/tileops/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tileops)
install(DIRECTORY ${PROJECT_BINARY_DIR}/core/include/tileops/ops/gen DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tileops/ops)
install(DIRECTORY ${PROJECT_BINARY_DIR}/core/include/tileops/extend/ops DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tileops/extend)

set(TILEOPS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tileops)
install(EXPORT tileopsTargets NAMESPACE tileops:: DESTINATION ${TILEOPS_CMAKE_DIR})
configure_package_config_file(cmake/tileopsConfig.cmake.in ${PROJECT_BINARY_DIR}/tileopsConfig.cmake
  INSTALL_DESTINATION ${TILEOPS_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_LIBDIR)
# 0.x releases break their API between minors: 0.1 must not satisfy a request for 0.0.1.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tileopsConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/tileopsConfig.cmake
  ${PROJECT_BINARY_DIR}/tileopsConfigVersion.cmake
  cmake/TileopsPlugin.cmake
  cmake/TileopsAddOps.cmake
  DESTINATION ${TILEOPS_CMAKE_DIR})

# tileops.pc finds the prefix relative to itself, so that a moved install tree still works.
set(TILEOPS_PKGCONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH TILEOPS_PC_TO_PREFIX /${TILEOPS_PKGCONFIG_DIR} /)
configure_file(cmake/tileops.pc.in ${PROJECT_BINARY_DIR}/tileops.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tileops.pc DESTINATION ${TILEOPS_PKGCONFIG_DIR})
