# catalog_admin_verify: `catalog-admin verify` on stores written by verify_test's hidden
# "[.admin_stores]" case: a clean one exits 0 with `ok`, a broken one 1 with each problem under
# its key; bad command lines and stores that do not exist exit 2 with a message on stderr (and
# create nothing).
#
#   cmake -DADMIN=<catalog-admin> -DVERIFY_TEST=<verify_test> -DWORK_DIR=<scratch> -P verify.cmake

cmake_minimum_required(VERSION 3.25)

foreach(var ADMIN VERIFY_TEST WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "verify.cmake needs -D${var}=...")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

set(failures 0)

# Runs catalog-admin with the remaining arguments; checks the exit status and that stdout and
# stderr contain the given texts (STATUS n [OUT texts...] [ERR texts...] ARGS args...).
function(admin)
  cmake_parse_arguments(PARSE_ARGV 0 a "" "STATUS" "OUT;ERR;ARGS")
  execute_process(COMMAND "${ADMIN}" ${a_ARGS}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(ok TRUE)
  if(NOT rc STREQUAL a_STATUS)
    message(STATUS "catalog-admin ${a_ARGS}: exit ${rc}, expected ${a_STATUS}")
    set(ok FALSE)
  endif()
  foreach(text IN LISTS a_OUT)
    string(FIND "${out}" "${text}" at)
    if(at EQUAL -1)
      message(STATUS "catalog-admin ${a_ARGS}: stdout lacks \"${text}\"")
      set(ok FALSE)
    endif()
  endforeach()
  foreach(text IN LISTS a_ERR)
    string(FIND "${err}" "${text}" at)
    if(at EQUAL -1)
      message(STATUS "catalog-admin ${a_ARGS}: stderr lacks \"${text}\"")
      set(ok FALSE)
    endif()
  endforeach()
  if(NOT ok)
    message(STATUS "---- stdout ----\n${out}---- stderr ----\n${err}")
    math(EXPR n "${failures} + 1")
    set(failures ${n} PARENT_SCOPE)
  endif()
endfunction()

set(ENV{CATALOG_ADMIN_STORES} "${WORK_DIR}")
execute_process(COMMAND "${VERIFY_TEST}" "[.admin_stores]"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "verify_test could not write the stores:\n${out}${err}")
endif()

admin(STATUS 0 OUT "ok\n" ARGS verify "lmdb:${WORK_DIR}/clean")
# Each problem on its line as `<key>: <message>`, the key printable (\xNN for other bytes).
admin(STATUS 1
  OUT "Nfmlflow.churn: missing: name entry of mlmodel mlflow.churn ("
      [[V\x00\x00\x00\x00\x00\x00\x00\x03: missing: event 3 (offsets jump from 2 to 4)]]
  ARGS verify "lmdb:${WORK_DIR}/broken")

admin(STATUS 2 ERR "catalog-admin: a command is needed: verify, backup" ARGS)
admin(STATUS 0 OUT "Usage: catalog-admin verify [OPTIONS] STORE" ARGS verify --help)
admin(STATUS 2 ERR "unknown command frobnicate" "catalog-admin --help" ARGS frobnicate)
admin(STATUS 2 ERR "STORE is required" "catalog-admin --help" ARGS verify)
admin(STATUS 2 ERR "catalog-admin: unexpected argument extra" ARGS verify "lmdb:${WORK_DIR}/clean" extra)
admin(STATUS 2 ERR "in-memory store starts empty" ARGS verify memory)
admin(STATUS 2 ERR "expected a store as lmdb:DIR" ARGS verify "${WORK_DIR}/clean")
admin(STATUS 2 ERR "no LMDB store in" ARGS verify "lmdb:${WORK_DIR}/missing")
if(EXISTS "${WORK_DIR}/missing")
  message(STATUS "catalog-admin verify created ${WORK_DIR}/missing")
  math(EXPR failures "${failures} + 1")
endif()

if(failures GREATER 0)
  message(FATAL_ERROR "${failures} catalog-admin check(s) failed")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
