# Include rules the layout promises (issue 10), checked by reading #include lines.
#   One-way layers: the engine (<catalog/detail/engine/...>, <catalog/impl/engine/...>) is below
#   the Store facade (<catalog/store.hpp>, impl/store/), the maintenance tools
#   (<catalog/admin.hpp>, impl/admin/) and the REST surface (src/rest, <catalog/rest/...>), and
#   includes none of them. The types the facade and the engine share are in headers below both
#   (<catalog/options.hpp>, <catalog/results.hpp>).
#   Header-mostly without the heavy dependencies: no header a host includes (every .hpp under
#   include/) includes LMDB or OpenSSL; only the .ipp bodies that src.hpp and the compiled
#   library include do.
# Usage: cmake -DSOURCE_DIR=<project root> -P layers.cmake

# Fails naming every include line of `files` that matches `pattern`; else reports `promise`.
function(forbid_includes what pattern promise)
  set(files ${ARGN})
  if(NOT files)
    message(FATAL_ERROR "no files to check for: ${promise}")
  endif()
  set(violations "")
  foreach(file ${files})
    file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include")
    foreach(line ${includes})
      if(line MATCHES "${pattern}")
        file(RELATIVE_PATH rel "${SOURCE_DIR}" "${file}")
        string(APPEND violations "\n  ${rel}: ${line}")
      endif()
    endforeach()
  endforeach()
  if(violations)
    message(FATAL_ERROR "${what}:${violations}")
  endif()
  list(LENGTH files n)
  message(STATUS "${n} ${promise}")
endfunction()

file(GLOB engine_files "${SOURCE_DIR}/include/catalog/impl/engine/*.ipp"
     "${SOURCE_DIR}/include/catalog/detail/engine/*.hpp"
     "${SOURCE_DIR}/include/catalog/impl/search/*.ipp"
     "${SOURCE_DIR}/include/catalog/detail/search/*.hpp")
forbid_includes("the engine includes a layer above it"
  "<catalog/(impl/)?(store|admin|src)\\.hpp>|<catalog/(rest|impl/store|impl/admin|detail/store|detail/admin)/|\""
  "engine and search files include no facade, admin or REST header" ${engine_files})

file(GLOB_RECURSE public_headers "${SOURCE_DIR}/include/catalog/*.hpp")
list(FILTER public_headers EXCLUDE REGEX "/src\\.hpp$")
forbid_includes("a public header includes LMDB, OpenSSL, utf8proc or libstemmer"
  "<lmdb\\.h>|<openssl/|<utf8proc\\.h>|<libstemmer\\.h>"
  "public headers include none of LMDB, OpenSSL, utf8proc, libstemmer" ${public_headers})

# The core knows nothing of the layers it does not link: no core header (outside rest/ and the
# PostgreSQL entry points) includes a REST or PostgreSQL header, and none gives an HTTP status.
file(GLOB_RECURSE core_headers "${SOURCE_DIR}/include/catalog/*.hpp" "${SOURCE_DIR}/include/catalog/*.ipp")
list(FILTER core_headers EXCLUDE REGEX "/rest/|/postgres\\.hpp$|/storage/postgres_backend\\.hpp$|/src\\.hpp$")
forbid_includes("a core header includes a REST or PostgreSQL header"
  "<catalog/rest/|<catalog/postgres\\.hpp>|<catalog/storage/postgres_backend\\.hpp>|<libpq"
  "core headers include no REST or PostgreSQL header" ${core_headers})
set(http_words "")
foreach(file ${core_headers})
  file(STRINGS "${file}" hits REGEX "http_status|METHOD_NOT_ALLOWED|status\\(\\) const")
  foreach(hit ${hits})
    file(RELATIVE_PATH rel "${SOURCE_DIR}" "${file}")
    string(APPEND http_words "\n  ${rel}: ${hit}")
  endforeach()
endforeach()
if(http_words)
  message(FATAL_ERROR "a core header speaks HTTP:${http_words}")
endif()
message(STATUS "core headers give no HTTP status")
