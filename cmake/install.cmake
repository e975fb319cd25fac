# Installs the binaries, the runtime libraries and headers, and the PaddleLaunch CMake package
# (find_package(PaddleLaunch) then target_link_libraries(app PRIVATE paddle::runtime)).
# Three components: `programs` (paddle-launch and train, all the pip package holds), `configs`
# (train's sample configs) and `development` (libraries, headers, CMake package); the .deb
# (cmake/packaging.cmake) holds all three.
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

# A wheel build (scikit-build-core sets SKBUILD) puts the programs in the wheel's scripts
# directory, which pip installs on the environment's PATH.
if(SKBUILD)
  set(PADDLE_LAUNCH_INSTALL_BINDIR "${SKBUILD_SCRIPTS_DIR}")
else()
  set(PADDLE_LAUNCH_INSTALL_BINDIR "${CMAKE_INSTALL_BINDIR}")
endif()
install(TARGETS paddle-launch train RUNTIME DESTINATION "${PADDLE_LAUNCH_INSTALL_BINDIR}" COMPONENT programs)
# train's sample configs (train --config /usr/share/paddle-launch/configs/fit_a_line.json).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/paddle-launch/configs
        COMPONENT configs FILES_MATCHING PATTERN "*.json")

set_target_properties(paddle_collective PROPERTIES EXPORT_NAME collective)
set_target_properties(paddle_store PROPERTIES EXPORT_NAME store)
set_target_properties(paddle_kernels PROPERTIES EXPORT_NAME kernels)
set_target_properties(paddle_ps PROPERTIES EXPORT_NAME ps)
foreach(target paddle_collective paddle_store paddle_kernels paddle_ps)
  target_include_directories(${target} PUBLIC $<INSTALL_INTERFACE:include/paddle_launch>)
endforeach()

install(TARGETS paddle_runtime paddle_collective paddle_store paddle_kernels paddle_ps paddle_common EXPORT PaddleLaunchTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development)
# Headers keep their folders: #include "runtime/core/tensor.h" works the same installed.
foreach(dir common store runtime collective kernels ps)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir} DESTINATION include/paddle_launch COMPONENT development
          FILES_MATCHING PATTERN "*.h" PATTERN example EXCLUDE)
endforeach()
install(EXPORT PaddleLaunchTargets NAMESPACE paddle:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/PaddleLaunch
        COMPONENT development)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/PaddleLaunchConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/PaddleLaunchConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/PaddleLaunch)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/PaddleLaunchConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/PaddleLaunchConfig.cmake ${PROJECT_BINARY_DIR}/PaddleLaunchConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/PaddleLaunch COMPONENT development)
