# ctest `fuzz_corpus_current`, run with `cmake -P`: the seed corpus in the repository is what
# fuzz_make_corpus writes. Every generated seed must exist under CORPUS with the same bytes;
# seeds added by hand (e.g. a fixed crash input kept as a regression seed) may stand beside them.
#
# Inputs (-D): MAKE_CORPUS (the generator), CORPUS (fuzz/corpus), WORK_DIR.
cmake_minimum_required(VERSION 3.25)

file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${MAKE_CORPUS} ${WORK_DIR} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${MAKE_CORPUS} failed (${rc})")
endif()
file(GLOB_RECURSE generated RELATIVE ${WORK_DIR} ${WORK_DIR}/*)
set(stale)
foreach(seed ${generated})
  if(NOT EXISTS ${CORPUS}/${seed})
    list(APPEND stale "${seed} (missing)")
  else()
    file(SHA256 ${WORK_DIR}/${seed} want)
    file(SHA256 ${CORPUS}/${seed} have)
    if(NOT want STREQUAL have)
      list(APPEND stale "${seed} (differs)")
    endif()
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
list(LENGTH generated count)
if(count EQUAL 0)
  message(FATAL_ERROR "${MAKE_CORPUS} wrote no seed")
endif()
if(stale)
  list(JOIN stale "\n  " stale)
  message(FATAL_ERROR "fuzz/corpus is not what fuzz_make_corpus writes; regenerate it with "
                      "`fuzz_make_corpus fuzz/corpus`:\n  ${stale}")
endif()
message(STATUS "${count} seeds current")
