include(GoogleTest)
# grain_add_test(NAME <name> SOURCES <src...> [LIBS <libs...>] [LABELS <labels...>])
# Builds one GoogleTest executable and registers each of its tests with CTest.
# Tests run from the build tree with GRAIN_SOURCE_DIR (their data: tests/data) and
# GRAIN_BINARY_DIR defined. A test that hangs fails after 15 minutes instead of stalling the run.
# Tests share the cores with one another (ctest -j), so the idle threads of threaded runs sleep
# instead of spinning (OMP_WAIT_POLICY=passive).
function(grain_add_test)
  cmake_parse_arguments(T "" "NAME" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  grain_target_defaults(${T_NAME})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${T_NAME} PRIVATE
    GRAIN_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    GRAIN_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT 900
                       ENVIRONMENT "OMP_WAIT_POLICY=passive" DISCOVERY_TIMEOUT 60)
endfunction()
