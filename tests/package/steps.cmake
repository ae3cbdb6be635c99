# The step helpers of the package tests (run.cmake, deb.cmake), included by both.
#
# fail(text): ends the test with `text`, after calling the function named by `STEP_CLEANUP` (if
# set: deb.cmake removes its packages) and removing WORK_DIR.
# step(what command...): runs the command in WORK_DIR; on failure prints what it wrote and fails
# the test. Its output is left in `step_output`.

function(fail text)
  if(STEP_CLEANUP)
    cmake_language(CALL ${STEP_CLEANUP})
  endif()
  file(REMOVE_RECURSE ${WORK_DIR})
  message(FATAL_ERROR "${text}")
endfunction()

function(step what)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORK_DIR}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    fail("${what} failed (${rc}):\n${ARGN}\n${out}")
  endif()
  message(STATUS "ok: ${what}")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()
