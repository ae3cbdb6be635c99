# Every tool's command line behaves alike (one parser, CLI11: examples/options.hpp): --version
# prints "<tool> MAJOR.MINOR.PATCH" and exits 0; --help prints the usage on stdout and exits 0;
# an option the tool does not have is refused with exit 2 and two lines on stderr, the first
# naming the option, the second pointing at --help.
# Usage: cmake -DTOOLS=<path>|<path>... -DVERSION=<project version> -P command_lines.cmake

string(REPLACE "|" ";" TOOLS "${TOOLS}")
foreach(tool ${TOOLS})
  get_filename_component(name "${tool}" NAME)
  execute_process(COMMAND "${tool}" --version RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out STREQUAL "${name} ${VERSION}\n" OR NOT err STREQUAL "")
    message(FATAL_ERROR "${name} --version: exit ${rc}, printed '${out}', said '${err}'")
  endif()
  execute_process(COMMAND "${tool}" --help RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "\nUsage: ${name} \\[OPTIONS\\]" OR NOT err STREQUAL "")
    message(FATAL_ERROR "${name} --help: exit ${rc}, printed '${out}', said '${err}'")
  endif()
  execute_process(COMMAND "${tool}" --no-such-flag RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  set(expected "^${name}: [^\n]*--no-such-flag[^\n]* \\(run ${name} --help for the usage\\)\n$")
  if(NOT rc EQUAL 2 OR NOT out STREQUAL "" OR NOT err MATCHES "${expected}")
    message(FATAL_ERROR "${name} --no-such-flag: exit ${rc}, printed '${out}', said '${err}'")
  endif()
  message(STATUS "${name}: --version, --help and an unknown option as every tool has them")
endforeach()
if(NOT TOOLS)
  message(FATAL_ERROR "no tool to check")
endif()
