# Runs catalog-bench with --json and checks the file it wrote (ctest catalog_bench_smoke and
# catalog_bench_smoke_postgres):
#
#   cmake -DBENCH=<catalog-bench> -DJSON=<file> "-DARGS=<arg>;<arg>..." [-DSEARCH=ON]
#         -P bench_json_check.cmake
#
# The run must exit 0 (every measured operation worked) and the file must parse, with one object
# per measurement holding name, mode, median_us, baseline_median_us and ratio (the last two null
# together, or numbers), measurement 1's catalog operations compared with their raw baseline,
# and a verdict per claim. The numbers themselves are not judged.
if(NOT BENCH OR NOT JSON)
  message(FATAL_ERROR "usage: cmake -DBENCH=<catalog-bench> -DJSON=<file> [-DARGS=...] -P ${CMAKE_SCRIPT_MODE_FILE}")
endif()
file(REMOVE "${JSON}")
execute_process(COMMAND "${BENCH}" ${ARGS} --json "${JSON}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "catalog-bench exited with ${rc}")
endif()
if(NOT EXISTS "${JSON}")
  message(FATAL_ERROR "catalog-bench did not write ${JSON}")
endif()
file(READ "${JSON}" doc)

string(JSON store ERROR_VARIABLE err GET "${doc}" store)
if(err)
  message(FATAL_ERROR "${JSON}: no \"store\" (or not JSON): ${err}")
endif()
string(JSON count ERROR_VARIABLE err LENGTH "${doc}" measurements)
if(err OR count EQUAL 0)
  message(FATAL_ERROR "${JSON}: no measurements: ${err}")
endif()

# The type of a member of measurement `i`, failing when it is missing.
function(member_type out i key)
  string(JSON type ERROR_VARIABLE err TYPE "${doc}" measurements ${i} ${key})
  if(err)
    message(FATAL_ERROR "${JSON}: measurement ${i} has no \"${key}\": ${err}")
  endif()
  set(${out} ${type} PARENT_SCOPE)
endfunction()

set(compared 0)
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  member_type(t ${i} name)
  member_type(m ${i} mode)
  if(NOT t STREQUAL "STRING" OR NOT m STREQUAL "STRING")
    message(FATAL_ERROR "${JSON}: measurement ${i}: name and mode must be strings")
  endif()
  string(JSON name GET "${doc}" measurements ${i} name)
  string(JSON mode GET "${doc}" measurements ${i} mode)
  if(name STREQUAL "" OR mode STREQUAL "")
    message(FATAL_ERROR "${JSON}: measurement ${i}: empty name or mode")
  endif()
  member_type(t ${i} median_us)
  if(NOT t STREQUAL "NUMBER")
    message(FATAL_ERROR "${JSON}: ${name}: median_us is ${t}, not a number")
  endif()
  string(JSON median GET "${doc}" measurements ${i} median_us)
  if(median LESS 0)
    message(FATAL_ERROR "${JSON}: ${name}: median_us ${median} is negative")
  endif()
  member_type(b ${i} baseline_median_us)
  member_type(r ${i} ratio)
  if(b STREQUAL "NULL" AND r STREQUAL "NULL")
    continue()
  endif()
  if(NOT b STREQUAL "NUMBER" OR NOT r STREQUAL "NUMBER")
    message(FATAL_ERROR "${JSON}: ${name}: baseline_median_us (${b}) and ratio (${r}) must be both numbers or both null")
  endif()
  string(JSON baseline GET "${doc}" measurements ${i} baseline_median_us)
  string(JSON ratio GET "${doc}" measurements ${i} ratio)
  if(NOT baseline GREATER 0 OR NOT ratio GREATER 0)
    message(FATAL_ERROR "${JSON}: ${name}: baseline ${baseline} and ratio ${ratio} must be positive")
  endif()
  math(EXPR compared "${compared} + 1")
endforeach()

# With -DSEARCH=ON, section 9 (search against SQLite FTS5 on the corpus) must have run, with each
# of its measurements: a corpus that could not be read would otherwise leave it out unnoticed.
if(SEARCH)
  set(names "")
  foreach(i RANGE ${last})
    string(JSON name GET "${doc}" measurements ${i} name)
    list(APPEND names "${name}")
  endforeach()
  set(search_names
      "load: create terms with search (no_sync)" "load: FTS5 insert in one transaction"
      "index size: bytes of index keys and values" "query 1 word" "query 2 words"
      "query 3 words" "query prefix" "query phrase" "query field-scoped" "query filtered"
      "query * with facets" "suggest" "relevance: known-item MRR@10" "reindex")
  # Writes with and without the index are compared on LMDB only (a store option of its own).
  if(store MATCHES "^lmdb")
    list(APPEND search_names "create term with search (sync)" "patch term with search (sync)"
         "create term with search (no_sync)" "patch term with search (no_sync)")
  endif()
  foreach(wanted IN LISTS search_names)
    list(FIND names "${wanted}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${JSON}: section 9 did not measure \"${wanted}\"")
    endif()
  endforeach()
endif()

# Measurement 1 (when it ran) compares create, patch and follow, sync and no_sync, with raw work.
string(JSON first GET "${doc}" measurements 0 section)
if(first STREQUAL "1" AND compared LESS 6)
  message(FATAL_ERROR "${JSON}: ${compared} measurements with a baseline, expected at least 6")
endif()

string(JSON verdicts ERROR_VARIABLE err LENGTH "${doc}" verdicts)
if(err OR verdicts EQUAL 0)
  message(FATAL_ERROR "${JSON}: no verdicts: ${err}")
endif()
math(EXPR last "${verdicts} - 1")
foreach(i RANGE ${last})
  string(JSON t ERROR_VARIABLE err TYPE "${doc}" verdicts ${i} holds)
  if(err OR NOT t STREQUAL "BOOLEAN")
    message(FATAL_ERROR "${JSON}: verdict ${i} has no boolean \"holds\"")
  endif()
endforeach()
message(STATUS "${JSON}: ${count} measurements (${compared} with a baseline), ${verdicts} verdicts, store ${store}")
file(REMOVE "${JSON}")
