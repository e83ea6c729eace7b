# The install test: cmake -DGRAIN_BUILD_DIR=... -DGRAIN_SOURCE_DIR=... -DWORK_DIR=...
#   -DGRAIN_VERSION=... -DCXX_COMPILER=... [-DCXX_LAUNCHER=...] -DGENERATOR=... -P this file
# Installs the build to WORK_DIR/prefix, checks the installed files, builds the downstream
# project tests/install against the installed package and runs its program.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "${command}\nfailed (${rc}):\n${out}")
  endif()
  set(output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
run(${CMAKE_COMMAND} --install ${GRAIN_BUILD_DIR} --prefix ${prefix})

foreach(file
    bin/grain-sim bin/grain-convert bin/grain-scene-schema
    lib/libgrain_core.a lib/libgrain_io.a lib/libgrain_app.a lib/libgrain_convert.a
    include/grain/core/timestepping/moreau_stepper.hpp include/grain/io/version.hpp
    share/grain/schemas/scene.xsd share/grain/schemas/study.xsd share/grain/scenes/pile.xml share/grain/scenes/models
    share/doc/grain/README.md share/doc/grain/LICENSE share/doc/grain/scene-format.md
    lib/cmake/grain/grainConfig.cmake lib/cmake/grain/grainConfigVersion.cmake
    lib/cmake/grain/grainTargets.cmake)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "not installed: ${prefix}/${file}")
  endif()
endforeach()
run(${prefix}/bin/grain-sim --version)
if(NOT output STREQUAL "grain-sim ${GRAIN_VERSION}\n")
  message(FATAL_ERROR "installed grain-sim --version printed '${output}'")
endif()

set(configure ${CMAKE_COMMAND} -S ${GRAIN_SOURCE_DIR}/tests/install -B ${WORK_DIR}/build
    -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
if(CXX_LAUNCHER)
  list(APPEND configure -DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_LAUNCHER})
endif()
run(${configure})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/falling_sphere)
message(STATUS "${output}")
file(REMOVE_RECURSE ${WORK_DIR})
