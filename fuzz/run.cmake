# One short libFuzzer run (ctest `<target>_smoke`, label `fuzz`), run with `cmake -P`: the
# target's seed corpus is copied to WORK_DIR/corpus (libFuzzer adds to the corpus it is given,
# and the repository's must not change), then the fuzzer runs SECONDS seconds on it. A crash, a
# leak, a timeout, running out of memory or a broken property fails the test; WORK_DIR is then
# kept with the input that did it (WORK_DIR/crash-*, leak-*, timeout-*, oom-*), else removed.
#
# Inputs (-D): FUZZER, CORPUS, WORK_DIR, SECONDS, MAX_LEN (bytes), and optionally EXTRA_ARGS.
cmake_minimum_required(VERSION 3.25)

foreach(var FUZZER CORPUS WORK_DIR SECONDS MAX_LEN)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run.cmake: -D${var}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/corpus)
file(GLOB seeds ${CORPUS}/*)
if(NOT seeds)
  message(FATAL_ERROR "no seeds in ${CORPUS}")
endif()
file(COPY ${seeds} DESTINATION ${WORK_DIR}/corpus)

# -seed=1: every run mutates in the same order (libFuzzer picks a random seed otherwise), so a
# CI failure is reproducible; only how far a run gets in its seconds depends on the machine.
# -timeout: one input may take a minute (an 8 MiB body under ASan is slow, not hung);
# -rss_limit_mb: the default 2 GB, also the largest single allocation (-malloc_limit_mb).
separate_arguments(extra UNIX_COMMAND "${EXTRA_ARGS}")
execute_process(
  COMMAND ${FUZZER} -seed=1 -max_total_time=${SECONDS} -max_len=${MAX_LEN} -timeout=60
          -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=${WORK_DIR}/ ${extra}
          ${WORK_DIR}/corpus
  WORKING_DIRECTORY ${WORK_DIR}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(GLOB artifacts ${WORK_DIR}/crash-* ${WORK_DIR}/leak-* ${WORK_DIR}/timeout-*
       ${WORK_DIR}/oom-* ${WORK_DIR}/slow-unit-*)
  message(FATAL_ERROR "${FUZZER} failed (${rc}); the input is kept: ${artifacts}\n"
                      "Reproduce with: ${FUZZER} <input>")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
