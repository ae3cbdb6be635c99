# One-way layers (issue 10): the engine (<catalog/detail/engine/...>, <catalog/impl/engine/...>)
# is below the Store facade (<catalog/store.hpp>, impl/store/), the maintenance tools
# (<catalog/admin.hpp>, impl/admin/) and the REST surface (src/rest, <catalog/rest/...>), and
# includes none of them. The types the facade and the
# engine share are in headers below both (<catalog/options.hpp>, <catalog/results.hpp>).
# Usage: cmake -DSOURCE_DIR=<project root> -P layers.cmake
file(GLOB engine_files "${SOURCE_DIR}/include/catalog/impl/engine/*.ipp"
     "${SOURCE_DIR}/include/catalog/detail/engine/*.hpp")
if(NOT engine_files)
  message(FATAL_ERROR "no engine sources under ${SOURCE_DIR}/include/catalog/{impl,detail}/engine")
endif()
set(violations "")
foreach(file ${engine_files})
  file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include")
  foreach(line ${includes})
    if(line MATCHES "<catalog/(impl/)?(store|admin|src)\\.hpp>|<catalog/(rest|impl/store|impl/admin|detail/store|detail/admin)/|\"")
      file(RELATIVE_PATH rel "${SOURCE_DIR}" "${file}")
      string(APPEND violations "\n  ${rel}: ${line}")
    endif()
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "the engine includes a layer above it:${violations}")
endif()
list(LENGTH engine_files n)
message(STATUS "${n} engine files include no facade, admin or REST header")

# Header-mostly without the heavy dependencies (issue 10 point 3): no header a host includes
# (every .hpp under include/) includes LMDB or OpenSSL; only the .ipp bodies that src.hpp and
# the compiled library include do.
file(GLOB_RECURSE public_headers "${SOURCE_DIR}/include/catalog/*.hpp")
list(FILTER public_headers EXCLUDE REGEX "/src\\.hpp$")
set(heavy "")
foreach(file ${public_headers})
  file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include")
  foreach(line ${includes})
    if(line MATCHES "<lmdb\\.h>|<openssl/")
      file(RELATIVE_PATH rel "${SOURCE_DIR}" "${file}")
      string(APPEND heavy "\n  ${rel}: ${line}")
    endif()
  endforeach()
endforeach()
if(heavy)
  message(FATAL_ERROR "a public header includes LMDB or OpenSSL:${heavy}")
endif()
list(LENGTH public_headers n)
message(STATUS "${n} public headers include neither LMDB nor OpenSSL")
