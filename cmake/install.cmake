# What `cmake --install` puts under the prefix (GNUInstallDirs): the CLI, librpmirror.so.0 and
# librpmirror.a, the public headers, the CMake package (find_package(rpmirror): targets
# rpmirror::rpmirror, the shared library, and rpmirror::rpmirror_static) and rpmirror.pc.
# The preload library installs itself (src/librepo_accel/CMakeLists.txt); man pages, completions
# and systemd units come from doc/ and dist/.
include(CMakePackageConfigHelpers)

set(RPMIRROR_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/rpmirror)

install(TARGETS rpmirror_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS rpmirror_shared rpmirror
  EXPORT rpmirror-targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/rpmirror
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT Development
  FILES_MATCHING PATTERN "*.hpp")

install(EXPORT rpmirror-targets
  NAMESPACE rpmirror::
  FILE rpmirrorTargets.cmake
  DESTINATION ${RPMIRROR_CMAKE_DIR} COMPONENT Development)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/rpmirrorConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/rpmirrorConfig.cmake
  INSTALL_DESTINATION ${RPMIRROR_CMAKE_DIR})
# 0.x: only the same minor version is compatible (the API changes between minor versions).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/rpmirrorConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/rpmirrorConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/rpmirrorConfigVersion.cmake
  DESTINATION ${RPMIRROR_CMAKE_DIR} COMPONENT Development)

# pkg-config: `pkg-config --cflags --libs rpmirror` links the shared library; add --static for
# librpmirror.a and everything it needs. The .pc paths are relative to ${prefix}, so
# `--define-prefix` (or PKG_CONFIG's automatic prefix) works for a relocated tree.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(RPMIRROR_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  set(RPMIRROR_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(RPMIRROR_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(RPMIRROR_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/rpmirror.pc.in ${PROJECT_BINARY_DIR}/cmake/rpmirror.pc
  @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cmake/rpmirror.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT Development)
