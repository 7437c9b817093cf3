# cmake -P script run on every build (src/silt/cli/CMakeLists.txt): writes
# OUT from IN with the current git commit and TARGET. configure_file leaves
# OUT untouched when nothing changed, so nothing recompiles then.
#   -DSOURCE_DIR=... -DIN=... -DOUT=... -DTARGET=linux/amd64
set(SILT_BUILD_COMMIT unknown)
find_program(GIT git)
if(GIT)
  execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0 AND commit)
    set(SILT_BUILD_COMMIT ${commit})
    execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE changes ERROR_QUIET)
    if(changes)
      string(APPEND SILT_BUILD_COMMIT "-dirty")
    endif()
  endif()
endif()
set(SILT_BUILD_TARGET ${TARGET})
configure_file(${IN} ${OUT} @ONLY)
