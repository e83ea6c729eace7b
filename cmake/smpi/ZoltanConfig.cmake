# Zoltan built with smpicc from Debian's trilinos source package by `tools/install-deps.sh smpi`
# (its stand-alone autotools build ships no CMake package file). The smpi preset points Zoltan_DIR
# here; GRAIN_SMPI_PREFIX is the prefix the script installed it in: the cache variable, else the
# environment variable the script read, else /opt/grain-smpi.
# Sets what Debian's ZoltanConfig.cmake sets and grain uses: Zoltan_INCLUDE_DIRS, Zoltan_LIBRARIES.
if(DEFINED ENV{GRAIN_SMPI_PREFIX})
  set(_grain_smpi_default "$ENV{GRAIN_SMPI_PREFIX}")
else()
  set(_grain_smpi_default "/opt/grain-smpi")
endif()
set(GRAIN_SMPI_PREFIX "${_grain_smpi_default}" CACHE PATH "Prefix of the SMPI build of Zoltan")
find_path(Zoltan_INCLUDE_DIR zoltan.h PATHS "${GRAIN_SMPI_PREFIX}/include" NO_DEFAULT_PATH)
find_library(Zoltan_LIBRARY NAMES libzoltan.a zoltan PATHS "${GRAIN_SMPI_PREFIX}/lib"
             NO_DEFAULT_PATH)
if(NOT Zoltan_INCLUDE_DIR OR NOT Zoltan_LIBRARY)
  set(Zoltan_FOUND FALSE)
  set(Zoltan_NOT_FOUND_MESSAGE
      "no SMPI build of Zoltan in ${GRAIN_SMPI_PREFIX}: run tools/install-deps.sh smpi")
  return()
endif()
set(Zoltan_INCLUDE_DIRS "${Zoltan_INCLUDE_DIR}")
set(Zoltan_LIBRARIES "${Zoltan_LIBRARY}" m)
set(Zoltan_FOUND TRUE)
