# `kspmv spmv --format nope` must fail and name the known formats.
execute_process(COMMAND ${EXE} spmv lap1d:10 --format nope RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "unknown format was accepted")
endif()
if(NOT err MATCHES "known formats: csr, kk-crs")
  message(FATAL_ERROR "message does not list the known formats: ${err}")
endif()
