# The package test (ctest `package_consumer`), run with `cmake -P`. Every route a host uses to
# get catalog, each building and running tests/package/consumer:
#   1. `cmake --install` the already-built project into WORK_DIR/prefix;
#   2. find_package(catalog 0.1) from that prefix: catalog::catalog, and catalog::rest and
#      catalog::postgres when built (their own small programs);
#   3. pkg-config from that prefix, one file per library: catalog, catalog-rest,
#      catalog-postgres;
#   4. catalog::header_only from that prefix: the program compiles <catalog/src.hpp> itself;
#   5. find_package(catalog) from the build tree (catalog_DIR=CATALOG_BINARY_DIR);
#   6. add_subdirectory of the source tree, with CATALOG_WITH_REST/POSTGRES=OFF (a unity build,
#      so that compiling the library again stays short).
# Needs no network. WORK_DIR is removed at the end, whether the test passes or fails. With
# -DCOMPILE_ROUTES=OFF (the sanitizer build, where compiling the library again takes most of
# the test's time) routes 4 and 6, which compile the library themselves, are left to the
# other builds.
#
# Inputs (-D): CATALOG_SOURCE_DIR, CATALOG_BINARY_DIR, CATALOG_CONFIG, CATALOG_VERSION,
# CATALOG_LIBDIR, CATALOG_EXPECT_REST, CATALOG_EXPECT_POSTGRES, CATALOG_EXPECT_TOOLS (the tools
# installed, | between them), CONSUMER_DIR, WORK_DIR,
# GENERATOR, MAKE_PROGRAM, CXX_COMPILER, CXX_FLAGS (the sanitizer flags the library was built
# with, if any), PKG_CONFIG.
cmake_minimum_required(VERSION 3.25)

foreach(var CATALOG_SOURCE_DIR CATALOG_BINARY_DIR CATALOG_VERSION CATALOG_LIBDIR CONSUMER_DIR WORK_DIR GENERATOR
            CXX_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)

include(${CMAKE_CURRENT_LIST_DIR}/steps.cmake)

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# 1. Install.
set(config_args)
if(CATALOG_CONFIG)
  set(config_args --config ${CATALOG_CONFIG})
endif()
step("cmake --install" ${CMAKE_COMMAND} --install ${CATALOG_BINARY_DIR} --prefix ${prefix}
     ${config_args})
set(installed include/catalog/store.hpp
             include/catalog/impl/store.hpp
             include/catalog/src.hpp
             include/catalog/impl/engine/patch.ipp
             ${CATALOG_LIBDIR}/cmake/catalog/catalogConfig.cmake
             ${CATALOG_LIBDIR}/cmake/catalog/catalogConfigVersion.cmake
             ${CATALOG_LIBDIR}/cmake/catalog/catalogTargets.cmake
             ${CATALOG_LIBDIR}/cmake/catalog/FindLMDB.cmake
             ${CATALOG_LIBDIR}/pkgconfig/catalog.pc)
set(pc_modules catalog)
set(programs consumer)
if(CATALOG_EXPECT_REST)
  list(APPEND installed ${CATALOG_LIBDIR}/pkgconfig/catalog-rest.pc)
  list(APPEND pc_modules catalog-rest)
  list(APPEND programs consumer_rest)
endif()
if(CATALOG_EXPECT_POSTGRES)
  list(APPEND installed ${CATALOG_LIBDIR}/pkgconfig/catalog-postgres.pc)
  list(APPEND pc_modules catalog-postgres)
  list(APPEND programs consumer_postgres)
endif()
# The licence (also where Debian looks for it, per package), the changelog and the behaviour
# reference the headers cite; each tool with its man page.
list(APPEND installed share/doc/catalog/LICENSE share/doc/catalog/README.md
     share/doc/catalog/CHANGELOG.md share/doc/catalog/docs/SEMANTICS.md
     share/doc/catalog/docs/COMPATIBILITY.md share/doc/libcatalog-dev/copyright
     share/doc/libcatalog-dev/changelog.gz)
string(REPLACE "|" ";" tools "${CATALOG_EXPECT_TOOLS}")
foreach(tool ${tools})
  list(APPEND installed bin/${tool} share/man/man1/${tool}.1.gz)
endforeach()
if(tools)
  list(APPEND installed share/doc/catalog-tools/copyright)
endif()
foreach(file ${installed})
  if(NOT EXISTS ${prefix}/${file})
    fail("cmake --install did not install ${file}")
  endif()
endforeach()

set(build_type_args)
if(CATALOG_CONFIG)
  set(build_type_args -DCMAKE_BUILD_TYPE=${CATALOG_CONFIG})
endif()
set(make_args)
if(MAKE_PROGRAM)
  set(make_args -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
endif()

# consumer(<route name> <build dir> <programs> <cmake -D arguments...>): configures, builds and
# runs the consumer project.
function(consumer what dir programs)
  step("configure the ${what} consumer"
       ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${dir} -G ${GENERATOR}
       ${make_args} ${build_type_args}
       -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
       "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
       -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
       -DCATALOG_EXPECT_REST=${CATALOG_EXPECT_REST}
       -DCATALOG_EXPECT_POSTGRES=${CATALOG_EXPECT_POSTGRES}
       -DCATALOG_EXPECT_VERSION=${CATALOG_VERSION}
       ${ARGN})
  step("build the ${what} consumer" ${CMAKE_COMMAND} --build ${dir} ${config_args})
  foreach(program ${programs})
    step("run the ${what} ${program}" ${dir}/${program})
  endforeach()
endfunction()

# 2. find_package from the install prefix.
consumer("find_package" ${WORK_DIR}/consumer-build "${programs}"
         -DCMAKE_PREFIX_PATH=${prefix} -DCATALOG_EXPECTED_PREFIX=${prefix})

# 3. pkg-config, one module per library: the program compiled and linked with -std=c++20 and
# the .pc flags only.
if(NOT PKG_CONFIG)
  fail("pkg-config not found: install it (cmake/install-deps.sh lists it) and reconfigure")
endif()
set(ENV{PKG_CONFIG_PATH} ${prefix}/${CATALOG_LIBDIR}/pkgconfig)
separate_arguments(extra_flags UNIX_COMMAND "${CXX_FLAGS}")
foreach(module ${pc_modules})
  step("pkg-config --modversion ${module}" ${PKG_CONFIG} --modversion ${module})
  string(STRIP "${step_output}" pc_version)
  if(NOT pc_version STREQUAL CATALOG_VERSION)
    fail("${module}.pc says version '${pc_version}', the project is ${CATALOG_VERSION}")
  endif()
  step("pkg-config --cflags --libs ${module}" ${PKG_CONFIG} --cflags --libs ${module})
  string(STRIP "${step_output}" pc_flags)
  message(STATUS "pkg-config ${module}: ${pc_flags}")
  string(FIND "${pc_flags}" "${prefix}" at)
  if(at EQUAL -1)
    fail("pkg-config flags do not point into the install prefix ${prefix}: ${pc_flags}")
  endif()
  separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
  if(module STREQUAL "catalog")
    set(source main.cpp)
  elseif(module STREQUAL "catalog-rest")
    set(source rest_main.cpp)
  else()
    set(source postgres_main.cpp)
  endif()
  # A shared libcatalog in a prefix off the loader's path is found through an rpath, as a
  # host that installs it there would link it.
  if(pc_flags MATCHES "-std=")
    fail("${module}.pc names a C++ standard (a C++23 host would be made C++20): ${pc_flags}")
  endif()
  step("compile and link the ${module} pkg-config consumer"
       ${CXX_COMPILER} -std=c++20 ${extra_flags} ${CONSUMER_DIR}/${source} ${pc_flags}
       -Wl,-rpath,${prefix}/${CATALOG_LIBDIR} -o ${WORK_DIR}/${module}-pc)
  step("run the ${module} pkg-config consumer" ${WORK_DIR}/${module}-pc)
endforeach()

if(NOT DEFINED COMPILE_ROUTES OR COMPILE_ROUTES)
  # 4. Header-only: catalog::header_only from the install prefix; main.cpp with header_only.cpp
  # (<catalog/src.hpp>), no libcatalog on the link line.
  consumer("header-only" ${WORK_DIR}/header-only-build consumer
           -DCMAKE_PREFIX_PATH=${prefix} -DCATALOG_EXPECTED_PREFIX=${prefix}
           -DCONSUMER_HEADER_ONLY=ON)
  set(links_libcatalog)
  if(EXISTS ${WORK_DIR}/header-only-build/build.ninja)
    file(STRINGS ${WORK_DIR}/header-only-build/build.ninja links_libcatalog REGEX "libcatalog")
  endif()
  if(links_libcatalog)
    fail("the header-only consumer links a catalog library")
  endif()
else()
  message(STATUS "skipped: the header-only route (COMPILE_ROUTES=OFF)")
endif()

# 5. The build tree as a package.
consumer("build tree" ${WORK_DIR}/build-tree-build "${programs}"
         -Dcatalog_DIR=${CATALOG_BINARY_DIR} -DCATALOG_EXPECTED_PREFIX=${CATALOG_BINARY_DIR})

if(NOT DEFINED COMPILE_ROUTES OR COMPILE_ROUTES)
  # 6. add_subdirectory of the sources.
  consumer("add_subdirectory" ${WORK_DIR}/subdirectory-build consumer
           -DCONSUMER_ROUTE=subdirectory -DCATALOG_SOURCE_DIR=${CATALOG_SOURCE_DIR}
           -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=0)
else()
  message(STATUS "skipped: the add_subdirectory route (COMPILE_ROUTES=OFF)")
endif()

file(REMOVE_RECURSE ${WORK_DIR})
