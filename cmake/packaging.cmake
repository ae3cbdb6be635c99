# Debian packages: `cpack -G DEB` in a build configured with BUILD_SHARED_LIBS=ON makes three,
# named as Debian names a library's packages (one per install component, CMakeLists.txt):
#   libcatalog<soversion>  runtime: libcatalog.so.N and, when built, libcatalog_rest and
#                          libcatalog_postgres;
#   libcatalog-dev         development: headers, .so links, CMake and pkg-config files, docs;
#   catalog-tools          catalog-admin, catalog-serve, catalog-replay, their man pages and
#                          catalog-serve's systemd unit (docs/DEPLOY.md).
# Dependencies are the Debian 12 packages of what the libraries and tools link, with the
# versions dpkg-shlibdeps gives for them, written out rather than computed, so packaging needs no
# dpkg-dev. The runtime package carries a shlibs file (what a package built against it depends
# on) and the ldconfig trigger. Binaries are stripped; man pages and changelogs are gzipped
# (CMakeLists.txt). tests/package/deb.cmake checks them with lintian, installs them and builds a
# consumer against /usr. The Maintainer is CPACK_PACKAGE_CONTACT (CMakeLists.txt).
set(CPACK_PACKAGE_NAME catalog)
set(CPACK_PACKAGE_VENDOR "catalog developers")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)
set(CPACK_COMPONENTS_ALL runtime development tools)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)

# The package names are CMakeLists.txt's (catalog_deb_<component>): each installs its licence
# under its name.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${catalog_deb_runtime})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(catalog_system_depends "libc6 (>= 2.34), libgcc-s1 (>= 3.0), libstdc++6 (>= 12)")
set(catalog_runtime_depends "${catalog_system_depends}, libboost-json1.81.0 (>= 1.81.0), liblmdb0 (>= 0.9.14), libssl3 (>= 3.0.0), libutf8proc2 (>= 2.0), libstemmer0d (>= 0+svn527)")
set(catalog_dev_depends "libboost1.81-dev, libboost-json1.81-dev, liblmdb-dev, libssl-dev, libutf8proc-dev, libstemmer-dev")
if(TARGET catalog_rest)
  string(APPEND catalog_runtime_depends ", libboost-url1.81.0 (>= 1.81.0)")
  string(APPEND catalog_dev_depends ", libboost-url1.81-dev")
endif()
if(TARGET catalog_postgres)
  string(APPEND catalog_runtime_depends ", libpq5 (>= 14~~)")
  string(APPEND catalog_dev_depends ", libpq-dev")
endif()
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "${catalog_runtime_depends}")
# shlibs: a package linked against libcatalog.so.N needs this version or a later one of the same
# SOVERSION (docs/COMPATIBILITY.md). triggers: ldconfig runs once after dpkg installs or removes.
set(catalog_shlibs)
foreach(library catalog catalog_rest catalog_postgres)
  if(TARGET ${library})
    string(APPEND catalog_shlibs
      "lib${library} ${PROJECT_VERSION_MAJOR} ${catalog_deb_runtime} (>= ${PROJECT_VERSION})\n")
  endif()
endforeach()
file(WRITE ${PROJECT_BINARY_DIR}/debian/runtime/shlibs "${catalog_shlibs}")
file(WRITE ${PROJECT_BINARY_DIR}/debian/runtime/triggers "activate-noawait ldconfig\n")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA
  ${PROJECT_BINARY_DIR}/debian/runtime/shlibs ${PROJECT_BINARY_DIR}/debian/runtime/triggers)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
  "Embeddable metadata catalog: shared libraries\n The catalog library over LMDB, its REST surface as a function and its\n PostgreSQL backend.")

set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME ${catalog_deb_development})
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS
  "${catalog_deb_runtime} (= ${PROJECT_VERSION}), ${catalog_dev_depends}")
set(CPACK_COMPONENT_DEVELOPMENT_DESCRIPTION
  "Embeddable metadata catalog: development files\n Headers, CMake package, pkg-config files and the behaviour reference of the\n catalog library.")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME ${catalog_deb_tools})
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION database)
# What the tools link themselves besides libcatalog (catalog-serve: OpenSSL).
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS
  "${catalog_deb_runtime} (= ${PROJECT_VERSION}), ${catalog_system_depends}, libboost-json1.81.0 (>= 1.81.0), libssl3 (>= 3.0.0)")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
  "Embeddable metadata catalog: tools\n catalog-admin (verify, backup, export, import, stats, events, reindex),\n catalog-serve (the REST API over HTTP, with a systemd unit) and\n catalog-replay.")

# A static build has no runtime library, so its libcatalog<soversion> would hold nothing but the
# copyright file. cpack reads this file before it makes a package of any generator.
get_target_property(catalog_library_type catalog TYPE)
if(NOT catalog_library_type STREQUAL "SHARED_LIBRARY")
  set(catalog_cpack_check [=[
if(CPACK_GENERATOR STREQUAL "DEB")
  message(FATAL_ERROR "catalog: Debian packages need a shared build: configure with "
                      "-DBUILD_SHARED_LIBS=ON (README.md, \"Debian packages\")")
endif()
]=])
  if(CPACK_PROJECT_CONFIG_FILE)  # the host's own, read after the check
    string(APPEND catalog_cpack_check "include(\"${CPACK_PROJECT_CONFIG_FILE}\")\n")
  endif()
  set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/catalog-cpack-static.cmake)
  file(WRITE ${CPACK_PROJECT_CONFIG_FILE} "${catalog_cpack_check}")
endif()

include(CPack)
