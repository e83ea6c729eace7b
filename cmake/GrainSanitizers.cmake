# grain_set_sanitizers(<target>): adds -fsanitize=${GRAIN_SANITIZE} when set.
function(grain_set_sanitizers target)
  if(GRAIN_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${GRAIN_SANITIZE} -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=${GRAIN_SANITIZE})
    # Whatever links an instrumented static library (also from an installed tree) needs the
    # sanitizer runtime.
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "STATIC_LIBRARY")
      target_link_options(${target} INTERFACE -fsanitize=${GRAIN_SANITIZE})
    endif()
  endif()
endfunction()

# grain_target_defaults(<target>): warnings + sanitizers, the setup of every grain target.
function(grain_target_defaults target)
  grain_set_warnings(${target})
  grain_set_sanitizers(${target})
endfunction()
