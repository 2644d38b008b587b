# kspmv_perf refuses a flag it does not know, naming it, before it runs
# anything (a misspelt flag used to be ignored and the default run went
# ahead); bad values and misspelt --benchmark_* flags are refused too.
# PERF: the kspmv_perf program.
function(expect_refused expect)
  execute_process(COMMAND ${PERF} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  list(JOIN ARGN " " line)
  if(rc EQUAL 0)
    message(FATAL_ERROR "kspmv_perf ${line} was accepted:\n${out}${err}")
  endif()
  if(NOT err MATCHES "${expect}")
    message(FATAL_ERROR "kspmv_perf ${line}: the message does not match '${expect}':\n${err}")
  endif()
  if(out MATCHES "copy bandwidth")
    message(FATAL_ERROR "kspmv_perf ${line} started measuring although refused:\n${out}")
  endif()
endfunction()

expect_refused("unknown flag '--formt'" --formt=ell)
expect_refused("unknown flag '--formt'" --matrices=lap1d:10 --formt ell)
expect_refused("unexpected argument 'lap1d:10'" lap1d:10)
expect_refused("--samples: must be a positive integer, not 'many'" --matrices=lap1d:10 --samples=many)
expect_refused("--precision: half not in" --matrices=lap1d:10 --precision=half)
expect_refused("--calibrate: must be a number >= 0" --matrices=lap1d:10 --calibrate=-2)
expect_refused("unrecognized command-line flag: --benchmark_fitler=x" --matrices=lap1d:10 --benchmark_fitler=x)
