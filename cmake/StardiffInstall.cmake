# StardiffInstall.cmake — install rules, exported targets and pkg-config file.
#
# find_package(stardiff CONFIG) gives stardiff::stardiff; pkg-config gives `stardiff`.
# Public headers never include StarPU, so consumers need only the shared library.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS stardiff EXPORT stardiffTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/stardiff DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp")
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/include/stardiff/version.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/stardiff)
install(EXPORT stardiffTargets NAMESPACE stardiff::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/stardiff)
configure_package_config_file(cmake/stardiffConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/stardiffConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/stardiff)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/stardiffConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/stardiffConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/stardiffConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/stardiff)
configure_file(cmake/stardiff.pc.in ${CMAKE_CURRENT_BINARY_DIR}/stardiff.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/stardiff.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
