# Installation and the exported CMake package `grain`:
#   cmake --install build/release --prefix P
# installs the executables (bin/), the libraries (lib/), the public headers (include/grain/),
# the scene schema, the example scenes and the docs (share/grain/, share/doc/grain/), and
# P/lib/cmake/grain/ so that a downstream project finds the libraries with
#   find_package(grain CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE grain::core grain::io)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The libraries grain installs and exports, each as grain::<name without "grain_">. A new
# library target is added here, and the packages it links in cmake/grainConfig.cmake.in
# (targets not built in this configuration are left out).
set(GRAIN_EXPORTED_LIBRARIES grain_core grain_io grain_app grain_convert grain_fclib grain_mpi)
# The executables grain installs.
set(GRAIN_INSTALLED_PROGRAMS grain-sim grain-sim-mpi grain-convert grain-fclib grain-scene-schema)

set(GRAIN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/grain)

set(grain_libraries "")
foreach(target IN LISTS GRAIN_EXPORTED_LIBRARIES)
  if(TARGET ${target})
    string(REGEX REPLACE "^grain_" "" export_name ${target})
    set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
    list(APPEND grain_libraries ${target})
  endif()
endforeach()
set(grain_programs "")
foreach(target IN LISTS GRAIN_INSTALLED_PROGRAMS)
  if(TARGET ${target})
    list(APPEND grain_programs ${target})
  endif()
endforeach()

install(TARGETS ${grain_libraries} EXPORT grainTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ${grain_programs} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/grain DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/schemas/scene.xsd ${PROJECT_SOURCE_DIR}/schemas/study.xsd
        DESTINATION ${CMAKE_INSTALL_DATADIR}/grain/schemas)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenes/ DESTINATION ${CMAKE_INSTALL_DATADIR}/grain/scenes)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

install(EXPORT grainTargets NAMESPACE grain:: DESTINATION ${GRAIN_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/grainConfig.cmake.in
  ${PROJECT_BINARY_DIR}/grainConfig.cmake INSTALL_DESTINATION ${GRAIN_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/grainConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/grainConfig.cmake ${PROJECT_BINARY_DIR}/grainConfigVersion.cmake
        DESTINATION ${GRAIN_INSTALL_CMAKEDIR})
