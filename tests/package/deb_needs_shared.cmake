# ctest `package_deb_needs_shared`, run with `cmake -P` in a static build: `cpack -G DEB` must
# stop with cmake/packaging.cmake's message, and make no package.
#
# Inputs (-D): CPACK_CONFIG (the build's CPackConfig.cmake), WORK_DIR (where packages would go).
cmake_minimum_required(VERSION 3.25)

file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_CPACK_COMMAND} -G DEB --config ${CPACK_CONFIG} -B ${WORK_DIR}
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
file(GLOB_RECURSE made ${WORK_DIR}/*.deb)
string(REGEX REPLACE "[ \t\r\n]+" " " said "${output}")  # CMake wraps its messages
if(result EQUAL 0 OR made)
  message(FATAL_ERROR "cpack -G DEB made packages in a static build (${made}):\n${output}")
endif()
if(NOT said MATCHES "Debian packages need a shared build: configure with -DBUILD_SHARED_LIBS=ON")
  message(FATAL_ERROR "cpack -G DEB failed, but not with the static build's message:\n${output}")
endif()
message("package_deb_needs_shared: cpack refused, as it should: ${said}")
