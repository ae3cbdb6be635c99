# The Debian package test (ctest `package_deb`), run with `cmake -P` in a shared build:
#   1. `cpack -G DEB` makes libcatalogN, libcatalog-dev and catalog-tools (cmake/packaging.cmake),
#      and lintian finds nothing to say of them;
#   2. `dpkg -i` installs the three into this machine (/usr);
#   3. tests/package/consumer is built against /usr with find_package, and with pkg-config per
#      library, and run; the installed tools answer --version from /usr/bin with the installed
#      libcatalog; the man pages are there; catalog-serve's systemd unit passes
#      `systemd-analyze verify`;
#   4. the packages are removed, whether the test passes or fails, and nothing of them is left.
# Skipped (prints "package_deb: skipped") when not run as root or without dpkg.
#
# Inputs (-D): CPACK_CONFIG (the build's CPackConfig.cmake), CATALOG_VERSION, CATALOG_SOVERSION,
# CATALOG_EXPECT_REST, CATALOG_EXPECT_POSTGRES, CONSUMER_DIR, WORK_DIR, GENERATOR, MAKE_PROGRAM,
# CXX_COMPILER, CXX_FLAGS, PKG_CONFIG.
cmake_minimum_required(VERSION 3.25)

execute_process(COMMAND id -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
find_program(DPKG dpkg)
if(NOT uid STREQUAL "0" OR NOT DPKG)
  message("package_deb: skipped (needs root and dpkg to install packages into the machine)")
  return()
endif()

set(runtime libcatalog${CATALOG_SOVERSION})
set(packages ${runtime} libcatalog-dev catalog-tools)

function(remove_packages)
  execute_process(COMMAND ${DPKG} --purge ${packages} OUTPUT_QUIET ERROR_QUIET)
endfunction()

set(STEP_CLEANUP remove_packages)
include(${CMAKE_CURRENT_LIST_DIR}/steps.cmake)

# A machine that already has them (a package of another build, say) is not ours to change.
foreach(package ${packages})
  execute_process(COMMAND dpkg-query -W -f=\${Status} ${package}
                  OUTPUT_VARIABLE status ERROR_QUIET RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND status MATCHES "installed")
    message(FATAL_ERROR "${package} is already installed on this machine: remove it first")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# 1. Make the packages.
step("cpack -G DEB" ${CMAKE_CPACK_COMMAND} -G DEB --config ${CPACK_CONFIG}
     -B ${WORK_DIR}/packages)
file(GLOB debs ${WORK_DIR}/packages/*.deb)
set(made)
foreach(deb ${debs})
  step("dpkg-deb -f ${deb}" dpkg-deb -f ${deb} Package Version)
  string(REGEX MATCH "Package: ([^\n]*)" _ "${step_output}")
  set(name ${CMAKE_MATCH_1})
  string(REGEX MATCH "Version: ([^\n]*)" _ "${step_output}")
  if(NOT CMAKE_MATCH_1 STREQUAL CATALOG_VERSION)
    fail("${deb} has version ${CMAKE_MATCH_1}, the project is ${CATALOG_VERSION}")
  endif()
  list(APPEND made ${name})
  set(deb_${name} ${deb})
endforeach()
list(SORT made)
set(expected ${packages})
list(SORT expected)
if(NOT made STREQUAL expected)
  fail("cpack made packages '${made}', expected '${expected}'")
endif()
step("dpkg-deb -c ${runtime}" dpkg-deb -c ${deb_${runtime}})
if(NOT step_output MATCHES "libcatalog\\.so\\.${CATALOG_SOVERSION}")
  fail("${runtime} holds no libcatalog.so.${CATALOG_SOVERSION}:\n${step_output}")
endif()
if(step_output MATCHES "include/|\\.a\n")
  fail("${runtime} holds development files:\n${step_output}")
endif()

# Debian's checks of a package (lintian, cmake/install-deps.sh): no error and no warning, but two
# tags that whoever builds the packages settles (cmake/packaging.cmake, README.md): the
# Maintainer's address (-DCPACK_PACKAGE_CONTACT) and the library directory (Debian's multiarch
# one when configured with -DCMAKE_INSTALL_PREFIX=/usr).
find_program(LINTIAN lintian)
if(LINTIAN)
  execute_process(COMMAND ${LINTIAN} --suppress-tags
      bogus-mail-host,bogus-mail-host-in-debian-changelog,pkg-config-unavailable-for-cross-compilation
      ${debs}
    RESULT_VARIABLE rc OUTPUT_VARIABLE lintian_output ERROR_VARIABLE lintian_output)
  if(NOT rc EQUAL 0 OR lintian_output MATCHES "(^|\n)[EW]: ")
    fail("lintian (${rc}) on ${debs}:\n${lintian_output}")
  endif()
  message(STATUS "ok: lintian")
else()
  message(STATUS "lintian is not installed: its check is left out")
endif()

# 2. Install them.
step("dpkg -i" ${DPKG} -i ${debs})

# 3. Use them.
set(tools catalog-admin)
set(programs consumer)
set(pc_modules catalog)
if(CATALOG_EXPECT_REST)
  list(APPEND tools catalog-serve catalog-replay)
  list(APPEND programs consumer_rest)
  list(APPEND pc_modules catalog-rest)
endif()
set(files /usr/include/catalog/store.hpp /usr/lib/cmake/catalog/catalogConfig.cmake
          /usr/lib/pkgconfig/catalog.pc /usr/share/doc/catalog/docs/SEMANTICS.md)
foreach(package libcatalog${CATALOG_SOVERSION} libcatalog-dev catalog-tools)
  list(APPEND files /usr/share/doc/${package}/copyright /usr/share/doc/${package}/changelog.gz)
endforeach()
foreach(tool ${tools})
  list(APPEND files /usr/bin/${tool} /usr/share/man/man1/${tool}.1.gz)
endforeach()
# What the tools' pages name.
list(APPEND files /usr/share/doc/catalog-tools/REST.md /usr/share/doc/catalog-tools/SEMANTICS.md)
foreach(file ${files})
  if(NOT EXISTS ${file})
    fail("the packages did not install ${file}")
  endif()
endforeach()
if(CATALOG_EXPECT_POSTGRES)
  list(APPEND programs consumer_postgres)
  list(APPEND pc_modules catalog-postgres)
endif()
foreach(tool ${tools})
  step("${tool} --version" /usr/bin/${tool} --version)
  if(NOT step_output MATCHES "${CATALOG_VERSION}")
    fail("/usr/bin/${tool} --version says '${step_output}', the project is ${CATALOG_VERSION}")
  endif()
  step("ldd ${tool}" ldd /usr/bin/${tool})
  # Found in /usr/lib, directly or through the tool's rpath ($ORIGIN/../lib).
  if(NOT step_output MATCHES "libcatalog\\.so\\.${CATALOG_SOVERSION} => /usr/(bin/\\.\\./)?lib/")
    fail("/usr/bin/${tool} does not use the installed libcatalog:\n${step_output}")
  endif()
endforeach()

# catalog-serve's systemd unit (docs/DEPLOY.md): installed where systemd reads a package's units,
# with the page and the example options, and systemd finds nothing to say of it, the installed
# /usr/bin/catalog-serve included.
if(CATALOG_EXPECT_REST)
  set(unit /usr/lib/systemd/system/catalog-serve.service)
  foreach(file ${unit} /usr/share/doc/catalog-tools/DEPLOY.md
               /usr/share/doc/catalog-tools/examples/catalog-serve.default)
    if(NOT EXISTS ${file})
      fail("the packages did not install ${file}")
    endif()
  endforeach()
  find_program(SYSTEMD_ANALYZE systemd-analyze)
  if(SYSTEMD_ANALYZE)
    step("systemd-analyze verify ${unit}" ${SYSTEMD_ANALYZE} verify --man=no ${unit})
    if(NOT step_output STREQUAL "")
      fail("systemd-analyze verify ${unit} says:\n${step_output}")
    endif()
  endif()
endif()

set(make_args)
if(MAKE_PROGRAM)
  set(make_args -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
endif()
step("configure the consumer against /usr"
     ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/consumer-build -G ${GENERATOR} ${make_args}
     -DCMAKE_CXX_COMPILER=${CXX_COMPILER} "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
     -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCATALOG_EXPECTED_PREFIX=/usr
     -DCATALOG_EXPECT_REST=${CATALOG_EXPECT_REST}
     -DCATALOG_EXPECT_POSTGRES=${CATALOG_EXPECT_POSTGRES})
step("build the consumer against /usr" ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-build)
foreach(program ${programs})
  step("run ${program}" ${WORK_DIR}/consumer-build/${program})
endforeach()

unset(ENV{PKG_CONFIG_PATH})
separate_arguments(extra_flags UNIX_COMMAND "${CXX_FLAGS}")
foreach(module ${pc_modules})
  step("pkg-config --cflags --libs ${module}" ${PKG_CONFIG} --cflags --libs ${module})
  string(STRIP "${step_output}" pc_flags)
  separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
  if(module STREQUAL "catalog")
    set(source main.cpp)
  elseif(module STREQUAL "catalog-rest")
    set(source rest_main.cpp)
  else()
    set(source postgres_main.cpp)
  endif()
  step("compile ${module} from /usr with pkg-config"
       ${CXX_COMPILER} -std=c++20 ${extra_flags} ${CONSUMER_DIR}/${source} ${pc_flags} -o ${WORK_DIR}/${module})
  step("run ${module}" ${WORK_DIR}/${module})
endforeach()

# 4. Remove them.
step("dpkg --purge" ${DPKG} --purge ${packages})
foreach(file /usr/include/catalog /usr/bin/catalog-admin /usr/lib/libcatalog.so.${CATALOG_SOVERSION}
             /usr/lib/systemd/system/catalog-serve.service)
  if(EXISTS ${file})
    fail("${file} is still there after dpkg --purge")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
