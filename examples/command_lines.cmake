# Every tool's command line behaves alike (one parser, CLI11: examples/options.hpp): --version
# prints "<tool> MAJOR.MINOR.PATCH" and exits 0; --help prints the usage on stdout and exits 0;
# an option the tool does not have, or an operand where none goes, is refused with exit 2 and
# one line on stderr in the same words from every tool, naming it and pointing at --help.
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
  # The same words from every tool, with a value or without.
  foreach(arg --no-such-flag --no-such-flag=1)
    execute_process(COMMAND "${tool}" ${arg} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                    ERROR_VARIABLE err)
    set(expected "${name}: unknown option --no-such-flag (run ${name} --help for the usage)\n")
    if(NOT rc EQUAL 2 OR NOT out STREQUAL "" OR NOT err STREQUAL "${expected}")
      message(FATAL_ERROR "${name} ${arg}: exit ${rc}, printed '${out}', said '${err}'")
    endif()
  endforeach()
  # An operand where none goes (catalog-admin reads its first as a command).
  if(name STREQUAL "catalog-admin")
    set(expected "${name}: unknown command stray (run ${name} --help for the usage)\n")
  else()
    set(expected "${name}: unexpected argument stray (run ${name} --help for the usage)\n")
  endif()
  execute_process(COMMAND "${tool}" stray RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT out STREQUAL "" OR NOT err STREQUAL "${expected}")
    message(FATAL_ERROR "${name} stray: exit ${rc}, printed '${out}', said '${err}'")
  endif()
  message(STATUS "${name}: --version, --help and an unknown option as every tool has them")
endforeach()
if(NOT TOOLS)
  message(FATAL_ERROR "no tool to check")
endif()
