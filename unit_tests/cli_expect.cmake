# expect_refused(EXPECT ARGS...): `${EXE} ARGS...` must be refused before
# anything runs: exit code 2 (a bad command line), a message on stderr
# matching EXPECT, nothing on stdout. Included by the cli_*.cmake tests.
function(expect_refused expect)
  execute_process(COMMAND ${EXE} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  list(JOIN ARGN " " line)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "kspmv ${line}: exit code ${rc}, expected 2 (bad command line)\n${out}${err}")
  endif()
  if(NOT err MATCHES "${expect}")
    message(FATAL_ERROR "kspmv ${line}: the message does not match '${expect}':\n${err}")
  endif()
  if(NOT out STREQUAL "")
    message(FATAL_ERROR "kspmv ${line}: printed on stdout although refused:\n${out}")
  endif()
endfunction()
