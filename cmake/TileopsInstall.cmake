include(CMakePackageConfigHelpers)

install(TARGETS tileops EXPORT tileopsTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS tileops_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS tileops_opgen EXPORT tileopsTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY core/include/tileops DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
install(DIRECTORY core/ops/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/core/include/tileops/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tileops)
install(DIRECTORY ${PROJECT_BINARY_DIR}/core/include/tileops/ops/gen DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tileops/ops)

set(TILEOPS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tileops)
install(EXPORT tileopsTargets NAMESPACE tileops:: DESTINATION ${TILEOPS_CMAKE_DIR})
configure_package_config_file(cmake/tileopsConfig.cmake.in ${PROJECT_BINARY_DIR}/tileopsConfig.cmake
  INSTALL_DESTINATION ${TILEOPS_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_LIBDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tileopsConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/tileopsConfig.cmake
  ${PROJECT_BINARY_DIR}/tileopsConfigVersion.cmake
  cmake/TileopsPlugin.cmake
  cmake/TileopsAddOps.cmake
  DESTINATION ${TILEOPS_CMAKE_DIR})
