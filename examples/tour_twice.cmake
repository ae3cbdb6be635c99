# Runs the catalog tour twice in a fresh directory DIR (cmake -DTOUR=<program> -DDIR=<dir>
# [-DTOUR_ARGS=<options>] -P tour_twice.cmake): both runs must exit 0, the first creates the data,
# the second finds it. TOUR_ARGS name another store (e.g. --store;postgresql:<conninfo>).
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
foreach(run first second)
  execute_process(COMMAND "${TOUR}" ${TOUR_ARGS} WORKING_DIRECTORY "${DIR}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("---- ${run} run ----\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the ${run} run of the tour exited with ${rc}")
  endif()
  if(run STREQUAL "first")
    set(expected "+ created user alice")
  else()
    set(expected "= found   user alice")
  endif()
  string(FIND "${out}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the ${run} run did not print \"${expected}\"")
  endif()
endforeach()
file(REMOVE_RECURSE "${DIR}")
