# Build options of grain. The default build has every component; a minimal
# workstation build may switch off MPI, HDF5 and Assimp.
option(GRAIN_WITH_MPI "Build the MPI layer and grain-sim-mpi" ON)
option(GRAIN_WITH_HDF5 "Build HDF5 export (grain-convert) and FCLIB reading" ON)
option(GRAIN_WITH_ASSIMP "Load triangle meshes with Assimp" ON)
option(GRAIN_BUILD_TESTS "Build the GoogleTest suite" ON)
option(GRAIN_BUILD_BENCHMARKS "Build the benchmark programs" ON)
option(GRAIN_WARNINGS_AS_ERRORS "Treat compiler warnings as errors on grain targets" ON)
# Checks the invariants of docs/reliability.md after every step (finite state, unit quaternions,
# no body twice, contacts in canonical order); costs O(N log N) per step. On in debug-asan.
option(GRAIN_CHECK_INVARIANTS "Check expensive invariants after every step" OFF)
set(GRAIN_SANITIZE "" CACHE STRING "Sanitizers for grain targets, e.g. address,undefined")
# libFuzzer harnesses of the file readers (tests/fuzz, tools/fuzz.sh); needs clang. Every grain
# library is then instrumented with fuzzer-no-link,address,undefined (the `fuzz` preset).
option(GRAIN_FUZZ "Build the libFuzzer harnesses of tests/fuzz (clang only)" OFF)
