# silt_module(<name> SOURCES ... [DEPS ...] [PRIVATE_DEPS ...])
#   Defines the static library silt_<name> for src/silt/<name>/. DEPS are
#   public (other silt modules, third-party targets whose headers appear in
#   this module's headers); PRIVATE_DEPS are used by .cc files only.
function(silt_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(silt_${name} STATIC ${ARG_SOURCES})
  target_include_directories(silt_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src
                                                 ${PROJECT_BINARY_DIR}/generated)
  target_link_libraries(silt_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
endfunction()

# silt_test(<module> SOURCES ... [DEPS ...] [LABELS ...])
#   One GoogleTest binary per module: silt_<module>_test, registered with
#   ctest under the labels `unit` and <module> plus LABELS.
function(silt_test module)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  if(NOT SILT_BUILD_TESTS)
    return()
  endif()
  add_executable(silt_${module}_test ${ARG_SOURCES})
  target_link_libraries(silt_${module}_test PRIVATE silt_${module} silt_testing ${ARG_DEPS}
                        GTest::gtest GTest::gmock GTest::gtest_main)
  add_test(NAME ${module} COMMAND silt_${module}_test)
  set_tests_properties(${module} PROPERTIES LABELS "unit;${module};${ARG_LABELS}")
endfunction()
