# SPDX-License-Identifier: LGPL-2.1-or-later
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
# Headers of the runtime layer and of the enabled modules only.
install(FILES include/stardiff/stardiff.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/stardiff)
foreach(m runtime ${STARDIFF_MODULES})
  if(IS_DIRECTORY ${PROJECT_SOURCE_DIR}/include/stardiff/${m})
    install(DIRECTORY include/stardiff/${m} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/stardiff
      FILES_MATCHING PATTERN "*.hpp" PATTERN "*.cuh")
  endif()
  if(EXISTS ${PROJECT_SOURCE_DIR}/include/stardiff/${m}.hpp)
    install(FILES include/stardiff/${m}.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/stardiff)
  endif()
endforeach()
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
  ${CMAKE_CURRENT_BINARY_DIR}/stardiffConfigVersion.cmake ${PROJECT_SOURCE_DIR}/cmake/StardiffCudaKernels.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/stardiff)
# prefix relative to the .pc file, so `cmake --install --prefix P` relocates it.
file(RELATIVE_PATH STARDIFF_PC_TO_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
configure_file(cmake/stardiff.pc.in ${CMAKE_CURRENT_BINARY_DIR}/stardiff.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/stardiff.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
