# Runs the catalog tour twice in a fresh directory DIR (cmake -DTOUR=<program> -DDIR=<dir>
# [-DTOUR_ARGS=<options>] -P tour_twice.cmake): both runs must exit 0, the first creates the data,
# the second finds it, and each prints the search section's answers. TOUR_ARGS name another
# store (e.g. --store;postgresql:<conninfo>).
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
  # Both runs: the search section's query with highlights and facets, its typeahead, and a
  # soft-deleted term gone from the next search.
  foreach(line "${expected}"
      "q=churn: 2 hits"
      "mlmodel_search_index mlflow.churn score "
      "name: <span class=\"text-highlighter\">churn</span>"
      "facet entityType glossaryTerm: 1"
      "facet entityType mlmodel: 1"
      "typeahead \"cust\": Business.Customer (glossary_term_search_index)"
      "q=ephemeral: 1 hit before the soft delete, 0 after it (1 with deleted=true)")
    string(FIND "${out}" "${line}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "the ${run} run did not print \"${line}\"")
    endif()
  endforeach()
endforeach()
file(REMOVE_RECURSE "${DIR}")
