# ctest `default_build_type`: the project configured on its own with no CMAKE_BUILD_TYPE builds
# Release (an empty type would compile without optimization), and a type given is kept.
# Usage: cmake -DSOURCE_DIR=<project> -DWORK_DIR=<scratch> -DGENERATOR=<generator> -P default_build_type.cmake
cmake_minimum_required(VERSION 3.25)

# configure(<what> <args...>): configures the project alone into WORK_DIR and sets `type` to the
# build type its cache holds.
function(configure what)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR} -G ${GENERATOR}
                          -DCATALOG_BUILD_TESTS=OFF -DCATALOG_BUILD_EXAMPLES=OFF ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configuring ${what} failed (${rc}):\n${out}")
  endif()
  file(STRINGS ${WORK_DIR}/CMakeCache.txt line REGEX "^CMAKE_BUILD_TYPE:")
  string(REGEX REPLACE "^[^=]*=" "" value "${line}")
  set(type "${value}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
configure("with no build type")
if(NOT type STREQUAL "Release")
  message(FATAL_ERROR "with no build type the project builds '${type}', not Release")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
configure("as Debug" -DCMAKE_BUILD_TYPE=Debug)
if(NOT type STREQUAL "Debug")
  message(FATAL_ERROR "given Debug, the project builds '${type}'")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "no build type: Release; Debug given: Debug")
