# The package test (ctest `package_consumer`), run with `cmake -P`:
#   1. `cmake --install` the already-built project into WORK_DIR/prefix;
#   2. configure, build and run tests/package/consumer with find_package(catalog 0.1 REQUIRED)
#      and CMAKE_PREFIX_PATH=WORK_DIR/prefix;
#   3. compile and run the same main.cpp with the flags of `pkg-config --cflags --libs catalog`;
#   4. compile and run it header-only: with header_only.cpp (<catalog/src.hpp>), no libcatalog.
# Needs no network. WORK_DIR is removed at the end, whether the test passes or fails.
#
# Inputs (-D): CATALOG_BINARY_DIR, CATALOG_CONFIG, CATALOG_VERSION, CATALOG_LIBDIR,
# CATALOG_EXPECT_REST, CONSUMER_DIR, WORK_DIR, GENERATOR, MAKE_PROGRAM, CXX_COMPILER, CXX_FLAGS
# (the sanitizer flags the library was built with, if any), PKG_CONFIG.
cmake_minimum_required(VERSION 3.25)

foreach(var CATALOG_BINARY_DIR CATALOG_VERSION CATALOG_LIBDIR CONSUMER_DIR WORK_DIR GENERATOR
            CXX_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)

function(fail text)
  file(REMOVE_RECURSE ${WORK_DIR})
  message(FATAL_ERROR "${text}")
endfunction()

# Runs a command; on failure prints what it wrote and fails the test. Its output is left in
# `step_output`.
function(step what)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORK_DIR}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    fail("${what} failed (${rc}):\n${ARGN}\n${out}")
  endif()
  message(STATUS "ok: ${what}")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# 1. Install.
set(config_args)
if(CATALOG_CONFIG)
  set(config_args --config ${CATALOG_CONFIG})
endif()
step("cmake --install" ${CMAKE_COMMAND} --install ${CATALOG_BINARY_DIR} --prefix ${prefix}
     ${config_args})
foreach(file include/catalog/store.hpp
             include/catalog/impl/store.hpp
             include/catalog/src.hpp
             include/catalog/impl/engine/patch.ipp
             ${CATALOG_LIBDIR}/cmake/catalog/catalogConfig.cmake
             ${CATALOG_LIBDIR}/cmake/catalog/catalogConfigVersion.cmake
             ${CATALOG_LIBDIR}/cmake/catalog/catalogTargets.cmake
             ${CATALOG_LIBDIR}/cmake/catalog/FindLMDB.cmake
             ${CATALOG_LIBDIR}/pkgconfig/catalog.pc)
  if(NOT EXISTS ${prefix}/${file})
    fail("cmake --install did not install ${file}")
  endif()
endforeach()

# 2. find_package consumer.
set(build_type_args)
if(CATALOG_CONFIG)
  set(build_type_args -DCMAKE_BUILD_TYPE=${CATALOG_CONFIG})
endif()
set(make_args)
if(MAKE_PROGRAM)
  set(make_args -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
endif()
step("configure the find_package consumer"
     ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/consumer-build -G ${GENERATOR}
     ${make_args} ${build_type_args}
     -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
     "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
     -DCMAKE_PREFIX_PATH=${prefix}
     -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
     -DCATALOG_EXPECTED_PREFIX=${prefix}
     -DCATALOG_EXPECT_REST=${CATALOG_EXPECT_REST})
step("build the find_package consumer"
     ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-build ${config_args})
step("run the find_package consumer" ${WORK_DIR}/consumer-build/consumer)

# 3. pkg-config consumer: the same program, compiled and linked with the .pc flags only.
if(NOT PKG_CONFIG)
  fail("pkg-config not found: install it (cmake/install-deps.sh lists it) and reconfigure")
endif()
set(ENV{PKG_CONFIG_PATH} ${prefix}/${CATALOG_LIBDIR}/pkgconfig)
step("pkg-config --modversion catalog" ${PKG_CONFIG} --modversion catalog)
string(STRIP "${step_output}" pc_version)
if(NOT pc_version STREQUAL CATALOG_VERSION)
  fail("catalog.pc says version '${pc_version}', the project is ${CATALOG_VERSION}")
endif()
step("pkg-config --cflags --libs catalog" ${PKG_CONFIG} --cflags --libs catalog)
string(STRIP "${step_output}" pc_flags)
message(STATUS "pkg-config flags: ${pc_flags}")
string(FIND "${pc_flags}" "${prefix}" at)
if(at EQUAL -1)
  fail("pkg-config flags do not point into the install prefix ${prefix}: ${pc_flags}")
endif()
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
separate_arguments(extra_flags UNIX_COMMAND "${CXX_FLAGS}")
step("compile and link the pkg-config consumer"
     ${CXX_COMPILER} ${extra_flags} ${CONSUMER_DIR}/main.cpp ${pc_flags}
     -o ${WORK_DIR}/consumer-pc)
step("run the pkg-config consumer" ${WORK_DIR}/consumer-pc)

# 4. Header-only consumer: the same main.cpp, with header_only.cpp compiling the library from
# <catalog/src.hpp>; only the installed headers and what catalog::catalog itself links (LMDB,
# libcrypto, Boost.JSON), no libcatalog.
step("compile and link the header-only consumer"
     ${CXX_COMPILER} ${extra_flags} -std=c++20 -I${prefix}/include
     ${CONSUMER_DIR}/main.cpp ${CONSUMER_DIR}/header_only.cpp
     -llmdb -lcrypto -lutf8proc -lstemmer -lboost_json -pthread -o ${WORK_DIR}/consumer-header-only)
step("run the header-only consumer" ${WORK_DIR}/consumer-header-only)

file(REMOVE_RECURSE ${WORK_DIR})
