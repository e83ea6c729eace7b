# grain_set_warnings(<target>): the warning set of every grain target.
# Warnings are errors on grain's own targets only (never on dependencies).
function(grain_set_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
    -Wmissing-declarations -Wimplicit-fallthrough)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    # GCC 12 reports false -Wrestrict positives inside libstdc++'s std::string operator+ at -O3
    # (GCC bug 105329).
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # Branch-free '&' on bools is intended (e.g. the friction check of the local solvers).
    # GCC-only warning names in pragmas (-Wmaybe-uninitialized) are not errors either.
    target_compile_options(${target} PRIVATE -Wno-bitwise-instead-of-logical
                                             -Wno-unknown-warning-option)
  endif()
  if(GRAIN_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
