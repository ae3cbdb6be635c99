# ctest `exported_symbols` (a shared build): the shared libraries export the API their headers mark
# CATALOG_DECL and nothing of their inside. No exported symbol is the engine's
# (catalog::engine::), Store::Impl's or in an anonymous namespace, and each library exports at
# most MAX_SYMBOLS of its own, named in catalog:: (with default visibility, libcatalog alone
# exported more than 20,000). Instantiations of the standard library's and Boost's templates and
# type information are not counted: under the sanitizers there are thousands (UBSan's checks of
# dynamic types need the type information visible).
# Usage: cmake -DNM=<nm> -DLIBRARIES=<path>|<path>... -DMAX_SYMBOLS=<n> -P exported_symbols.cmake
cmake_minimum_required(VERSION 3.25)

string(REPLACE "|" ";" LIBRARIES "${LIBRARIES}")
foreach(library ${LIBRARIES})
  get_filename_component(name "${library}" NAME)
  execute_process(COMMAND ${NM} -D --defined-only -C "${library}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} -D ${library} (${rc}): ${err}")
  endif()
  string(REGEX REPLACE "\n$" "" out "${out}")
  string(REPLACE ";" "," out "${out}")
  string(REPLACE "\n" ";" symbols "${out}")
  list(LENGTH symbols count)
  set(own 0)
  set(inside)
  foreach(line ${symbols})
    # "<address> <type> <name>": the name up to its parameters is what is exported.
    string(REGEX REPLACE "^[0-9a-f]+ [A-Za-z] " "" symbol "${line}")
    string(REGEX REPLACE "\\(.*" "" qualified "${symbol}")
    if(qualified MATCHES "^catalog::")
      math(EXPR own "${own} + 1")
    endif()
    if(qualified MATCHES "^catalog::engine::|anonymous namespace|Store::Impl::" OR
       symbol MATCHES "^(typeinfo|vtable)[a-z ]* for catalog::engine::")
      list(APPEND inside "${symbol}")
    endif()
  endforeach()
  if(inside)
    list(JOIN inside "\n  " inside)
    message(FATAL_ERROR "${name} exports the library's inside:\n  ${inside}")
  endif()
  if(own GREATER MAX_SYMBOLS)
    message(FATAL_ERROR "${name} exports ${own} symbols of its own, more than ${MAX_SYMBOLS}: is "
                        "the library still compiled with hidden visibility?")
  endif()
  message(STATUS "${name}: ${count} symbols exported, ${own} of them the library's own, none "
                 "of the engine's")
endforeach()
