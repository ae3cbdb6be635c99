# catalog_replay_script: pipes the JSON-lines scripts of this directory through catalog-replay
# and checks every output line against <script>.expected.jsonl (same line count; per line the
# status, the errorType of error bodies, given headers, and substrings of the line).
#
#   cmake -DREPLAY=<catalog-replay> -DSOURCE_DIR=<this dir> -DWORK_DIR=<scratch>
#         [-DSTORE=<store> [-DSTORE_ARGS=<options>]] -P run.cmake
#
# Scripts use placeholders: @admin@, @bob@, ... are the tokens of tokens.json (HS256, signed
# with the exact bytes of hs256.secret, final newline included; see README.md); @bob_id@,
# @model_id@, @glossary_id@, @term_id@ are ids the `setup` script created, read from its output
# (the `followup` script runs on the same LMDB store, so it can address them).

cmake_minimum_required(VERSION 3.25)

foreach(var REPLAY SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run.cmake needs -D${var}=...")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

set_property(GLOBAL PROPERTY replay_failures "")
function(failed what)
  message(STATUS "FAILED: ${what}")
  set_property(GLOBAL APPEND PROPERTY replay_failures "x")
endfunction()

# Splits `text` at newlines into <prefix>_1 ... <prefix>_<n> and <prefix>_count (a final newline
# ends the last line). Done by hand: CMake lists would split at ';' and respect brackets.
function(split_lines text prefix)
  set(n 0)
  while(NOT text STREQUAL "")
    string(FIND "${text}" "\n" at)
    math(EXPR n "${n} + 1")
    if(at EQUAL -1)
      set(${prefix}_${n} "${text}" PARENT_SCOPE)
      set(text "")
    else()
      string(SUBSTRING "${text}" 0 ${at} line)
      set(${prefix}_${n} "${line}" PARENT_SCOPE)
      math(EXPR next "${at} + 1")
      string(SUBSTRING "${text}" ${next} -1 text)
    endif()
  endwhile()
  set(${prefix}_count ${n} PARENT_SCOPE)
endfunction()

# The placeholders: tokens now, ids once `setup` has run.
file(READ "${SOURCE_DIR}/tokens.json" tokens)
set(placeholders admin bob expired trimmed name_claim)
foreach(name ${placeholders})
  string(JSON value_${name} GET "${tokens}" ${name})
endforeach()

function(substitute text out)
  get_property(names GLOBAL PROPERTY replay_placeholders)
  foreach(name ${names})
    get_property(value GLOBAL PROPERTY replay_value_${name})
    string(REPLACE "@${name}@" "${value}" text "${text}")
  endforeach()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()
foreach(name ${placeholders})
  set_property(GLOBAL APPEND PROPERTY replay_placeholders ${name})
  set_property(GLOBAL PROPERTY replay_value_${name} "${value_${name}}")
endforeach()

# Runs script `name` with `ARGN` as options; its output lines are left in out_<i> (caller scope)
# and checked against <name>.expected.jsonl.
macro(replay name)
  file(READ "${SOURCE_DIR}/${name}.jsonl" script)
  substitute("${script}" script)
  file(WRITE "${WORK_DIR}/${name}.jsonl" "${script}")
  execute_process(COMMAND "${REPLAY}" ${ARGN}
    INPUT_FILE "${WORK_DIR}/${name}.jsonl"
    OUTPUT_FILE "${WORK_DIR}/${name}.out"
    ERROR_VARIABLE stderr
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    failed("${name}: exit status ${rc}: ${stderr}")
  endif()
  file(READ "${WORK_DIR}/${name}.out" output)
  file(READ "${SOURCE_DIR}/${name}.expected.jsonl" expected)
  split_lines("${script}" in)
  split_lines("${output}" out)
  split_lines("${expected}" exp)
  if(NOT out_count EQUAL in_count OR NOT exp_count EQUAL in_count)
    failed("${name}: ${in_count} input lines, ${out_count} output lines, ${exp_count} expected")
  endif()
  check_lines(${name})
endmacro()

function(check_lines name)
  foreach(i RANGE 1 ${exp_count})
    set(line "${out_${i}}")
    set(want "${exp_${i}}")
    set(where "${name} line ${i}")
    string(JSON type ERROR_VARIABLE bad TYPE "${line}")
    if(bad OR NOT type STREQUAL "OBJECT")
      failed("${where}: not a JSON object: ${line}")
      continue()
    endif()
    string(JSON want_status GET "${want}" status)
    string(JSON got_status GET "${line}" status)
    if(NOT got_status EQUAL want_status)
      failed("${where}: status ${got_status}, expected ${want_status}: ${line}")
      continue()
    endif()
    string(JSON error_type ERROR_VARIABLE no_error_type GET "${want}" errorType)
    if(NOT no_error_type)
      string(JSON got_type ERROR_VARIABLE bad GET "${line}" body errorType)
      string(JSON got_code ERROR_VARIABLE bad_code GET "${line}" body code)
      if(bad OR bad_code OR NOT got_type STREQUAL error_type OR NOT got_code EQUAL want_status)
        failed("${where}: expected errorType ${error_type} and code ${want_status}: ${line}")
      endif()
    endif()
    string(JSON n ERROR_VARIABLE no_has LENGTH "${want}" has)
    if(NOT no_has AND n GREATER 0)
      math(EXPR last "${n} - 1")
      foreach(k RANGE 0 ${last})
        string(JSON needle GET "${want}" has ${k})
        string(FIND "${line}" "${needle}" at)
        if(at EQUAL -1)
          failed("${where}: missing ${needle}: ${line}")
        endif()
      endforeach()
    endif()
    string(JSON n ERROR_VARIABLE no_headers LENGTH "${want}" headers)
    if(NOT no_headers AND n GREATER 0)
      math(EXPR last "${n} - 1")
      foreach(k RANGE 0 ${last})
        string(JSON header MEMBER "${want}" headers ${k})
        string(JSON value GET "${want}" headers "${header}")
        string(JSON got ERROR_VARIABLE bad GET "${line}" headers "${header}")
        if(bad OR NOT got STREQUAL value)
          failed("${where}: header ${header} should be ${value}: ${line}")
        endif()
      endforeach()
    endif()
  endforeach()
endfunction()

set(secret "--jwt-hs256-secret-file" "${SOURCE_DIR}/hs256.secret")
# STORE (e.g. postgresql:<conninfo>, with STORE_ARGS such as --postgres-schema;<name>) replaces
# the LMDB store of setup and followup: the same answers are expected of every store.
if(DEFINED STORE)
  set(store "--store" "${STORE}" ${STORE_ARGS})
else()
  set(store "--store" "lmdb:${WORK_DIR}/store")
endif()
set(common ${secret} --admin admin --base-url http://catalog.test --now 1767225600)

# 1. setup: creates, every status, malformed and blank lines.
replay(setup ${store} ${common})
foreach(pair "bob_id;1" "model_id;3" "glossary_id;4" "term_id;5")
  list(GET pair 0 name)
  list(GET pair 1 index)
  string(JSON id ERROR_VARIABLE bad GET "${out_${index}}" body id)
  if(bad)
    failed("setup line ${index}: no id to carry on: ${out_${index}}")
  endif()
  set_property(GLOBAL APPEND PROPERTY replay_placeholders ${name})
  set_property(GLOBAL PROPERTY replay_value_${name} "${id}")
endforeach()

# 2. search: the three search routes over what setup left (a model; a glossary and its term
# soft-deleted), their answers' shapes and every kind of refusal.
replay(search ${store} ${common})

# 3. followup: the same LMDB store, addressing what setup created by id.
replay(followup ${store} ${common})

# 4. No key configured: every request is 401 (memory store, the default).
replay(nokey --admin admin --now 1767225600)

# 5. --jwt-principal-claim replaces the default claim list (sub no longer names anyone).
replay(claims ${secret} --jwt-principal-claim name --admin admin --now 1767225600)

# 6. Bad options: a message on stderr and exit status 2.
file(WRITE "${WORK_DIR}/short.secret" "too short")
foreach(args
    "--bogus"
    "--store"
    "--store;nowhere"
    "--store;lmdb:"
    "--jwt-leeway;-1"
    "--jwt-leeway;abc"
    "--now;1.5"
    "--now;99999999999999999999"
    "--jwt-hs256-secret-file;${WORK_DIR}/missing.secret"
    "--jwt-hs256-secret-file;${WORK_DIR}/short.secret"
    "--jwt-rs256-public-key-file;${SOURCE_DIR}/hs256.secret"
    "--jwt-allow-no-exp=yes"
    "--jwt-hs256-secret-file;${WORK_DIR}"
    "--jwt-rs256-public-key-file;${WORK_DIR}"
    "--base-url;a;--base-url;b")
  execute_process(COMMAND "${REPLAY}" ${args}
    INPUT_FILE "${SOURCE_DIR}/nokey.jsonl"
    OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr RESULT_VARIABLE rc)
  # One line saying what is wrong, and where the usage is: not the usage itself, no abort.
  if(NOT rc EQUAL 2 OR stderr STREQUAL "" OR NOT stdout STREQUAL "" OR stderr MATCHES "usage:"
     OR NOT stderr MATCHES "^catalog-replay: [^\n]* \\(run catalog-replay --help for the usage\\)\n$")
    failed("options ${args}: exit ${rc}, stderr '${stderr}', stdout '${stdout}'")
  endif()
endforeach()

# --version: the program and the library's version, exit 0.
execute_process(COMMAND "${REPLAY}" --version
  OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT stderr STREQUAL ""
   OR NOT stdout MATCHES "^catalog-replay [0-9]+\\.[0-9]+\\.[0-9]+\n$")
  failed("--version: exit ${rc}, stdout '${stdout}', stderr '${stderr}'")
endif()

# A store written before search (the format fixture, loaded with mdb_load): indexed when opened,
# and catalog-replay says so on stderr, its stdout left to the answers.
set(fixtures "${SOURCE_DIR}/../fixtures")
file(REMOVE_RECURSE "${WORK_DIR}/old")
execute_process(COMMAND "${fixtures}/lmdb_store.sh" "${fixtures}/store_schema2.pairs" "${WORK_DIR}/old"
  RESULT_VARIABLE rc ERROR_VARIABLE stderr)
if(NOT rc EQUAL 0)
  failed("mdb_load could not write the fixture's store: ${stderr}")
else()
  execute_process(COMMAND "${REPLAY}" --store "lmdb:${WORK_DIR}/old" INPUT_FILE /dev/null
    OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT stdout STREQUAL ""
     OR NOT stderr MATCHES "^catalog-replay: building the search index \\(version [0-9]+\\)[^\n]*\ncatalog-replay: built the search index: [1-9][0-9]* entities\n$")
    failed("a store written before search: exit ${rc}, stdout '${stdout}', stderr '${stderr}'")
  endif()
endif()

get_property(failures GLOBAL PROPERTY replay_failures)
if(failures)
  list(LENGTH failures count)
  message(FATAL_ERROR "catalog_replay_script: ${count} failure(s)")
endif()
message(STATUS "catalog_replay_script: all lines as expected")
