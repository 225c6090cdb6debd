# `cmake --install`: libfusec.so, the public headers, a CMake package
# (find_package(fusec) gives fusec::fusec) and a pkg-config file.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS fusec_shared fusec_runtime_shared fusec_runtime_static EXPORT fusecTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/fusec DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS fusec RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT fusecTargets NAMESPACE fusec::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fusec)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/fusecConfig.cmake.in
  ${PROJECT_BINARY_DIR}/fusecConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fusec)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/fusecConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/fusecConfig.cmake ${PROJECT_BINARY_DIR}/fusecConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fusec)
configure_file(${PROJECT_SOURCE_DIR}/cmake/fusec.pc.in ${PROJECT_BINARY_DIR}/fusec.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/fusec.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
